import { useState } from 'preact/hooks';

const split = (text: string) =>
  text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);

/** Most of the tenant's tags offered at once (the field narrows them as one types). */
const OFFERED = 24;

/**
 * A link's tags: the chosen ones (each removable), a field for new ones (Enter or a comma adds;
 * what is still typed goes with the form too), and the tenant's existing tags to pick with one
 * click, narrowed by what is typed. The form reads every `tags` value.
 */
export function TagPicker({ initial, known, error }: { initial: readonly string[]; known: readonly string[]; error: string | null }) {
  const [tags, setTags] = useState<string[]>([...initial]);
  const [typed, setTyped] = useState('');
  const add = (more: string[]) => setTags((before) => [...new Set([...before, ...more])]);
  const offered = known.filter((t) => !tags.includes(t) && t.toLowerCase().includes(typed.trim().toLowerCase())).slice(0, OFFERED);
  return (
    <div class="field tag-picker">
      <label for="f-tags">Tags</label>
      {tags.length > 0 && (
        <ul class="chips" aria-label="Chosen tags">
          {tags.map((t) => (
            <li key={t}>
              <span class="tag">{t}</span>
              <input type="hidden" name="tags" value={t} />
              <button type="button" class="link" aria-label={`Remove the tag ${t}`} onClick={() => setTags(tags.filter((x) => x !== t))}>
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <input
        id="f-tags"
        name="tags"
        value={typed}
        autocomplete="off"
        placeholder="A new tag, or pick one below"
        aria-describedby={`f-tags-hint${error ? ' f-tags-error' : ''}`}
        aria-invalid={error ? 'true' : undefined}
        onInput={(e) => {
          const value = e.currentTarget.value;
          // A comma ends a tag: what is before it is added.
          if (value.includes(',')) {
            add(split(value.slice(0, value.lastIndexOf(','))));
            setTyped(value.slice(value.lastIndexOf(',') + 1));
          } else setTyped(value);
        }}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && typed.trim()) {
            e.preventDefault();
            add(split(typed));
            setTyped('');
          }
        }}
      />
      <small id="f-tags-hint" class="hint">
        Enter or a comma adds a tag
      </small>
      {offered.length > 0 && (
        <div class="known-tags" role="group" aria-label="Your tags">
          {offered.map((t) => (
            <button
              key={t}
              type="button"
              class="secondary small"
              aria-label={`Add the tag ${t}`}
              onClick={() => {
                add([t]);
                setTyped('');
              }}
            >
              + {t}
            </button>
          ))}
        </div>
      )}
      {error && (
        <p id="f-tags-error" class="error" data-field="tags" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
