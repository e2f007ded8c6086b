import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Problem } from './api/client';

/** The current hash route (#/links/abc → ['links', 'abc']) and its query. */
export function useRoute(): { parts: string[]; query: URLSearchParams } {
  const read = () => {
    const [path, search = ''] = location.hash.replace(/^#\/?/, '').split('?');
    return { parts: path.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(search) };
  };
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const on = () => setRoute(read());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

export const go = (hash: string) => (location.hash = hash);

let ids = 0;
/** A labelled input; its error (problem+json) right under it, tied by aria-describedby. */
export function Field(props: {
  label: string;
  name: string;
  /** The id of a child control (a select); the label points at it. */
  id?: string;
  error?: string | null;
  hint?: string;
  children?: ComponentChildren;
  input?: JSX.InputHTMLAttributes<HTMLInputElement>;
}) {
  const [generated] = useState(() => `f-${props.name}-${++ids}`);
  const id = props.id ?? generated;
  const describedBy = [props.hint ? `${id}-hint` : '', props.error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.children ?? <input id={id} name={props.name} aria-invalid={props.error ? 'true' : undefined} aria-describedby={describedBy} {...props.input} />}
      {props.hint && (
        <small id={`${id}-hint`} class="hint">
          {props.hint}
        </small>
      )}
      {props.error && (
        <p id={`${id}-error`} class="error" data-field={props.name} role="alert">
          {props.error}
        </p>
      )}
    </div>
  );
}

const startedSelects = new WeakSet<HTMLSelectElement>();
/**
 * A select that opens on `initial` and is then the person's. A select element has no
 * `defaultValue` (Preact would set nothing and the first option would show, so an edit could save
 * it), and `value` would put the start back at every render: the start is set once, when the
 * element is there with its options.
 */
export function Select({ initial, ...props }: Omit<JSX.SelectHTMLAttributes<HTMLSelectElement>, 'defaultValue' | 'value' | 'ref'> & { initial?: string }) {
  return (
    <select
      {...props}
      ref={(el) => {
        if (!el || startedSelects.has(el)) return;
        startedSelects.add(el);
        if (initial !== undefined) el.value = initial;
      }}
    />
  );
}

/** A problem next to the action it concerns. */
export function ProblemNote({ problem, id }: { problem: Problem | null; id?: string }) {
  if (!problem) return null;
  return (
    <p class="error" role="alert" id={id} data-code={problem.code}>
      {problem.detail}
    </p>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

/**
 * A wide table's box: it scrolls sideways inside itself where the screen is narrow, so it is a
 * labelled region that takes focus (a keyboard scrolls it with the arrow keys; axe:
 * scrollable-region-focusable).
 */
export function ScrollRegion({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

/** A country's name in the reader's language (ISO 3166-1 alpha-2 → "Germany"), the code itself where the browser has none. */
export function countryName(code: string): string {
  try {
    return new Intl.DisplayNames(undefined, { type: 'region' }).of(code) ?? code;
  } catch {
    return code;
  }
}
