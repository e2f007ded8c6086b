import { useEffect, useState } from 'preact/hooks';
import { api, type Problem, problemOf, type Schemas } from '../api/client';
import { Field, ProblemNote, ScrollRegion, when } from '../ui';

type Entry = Schemas['AuditEntry'];

const targetOf = (t: Entry['target']) => {
  const o = (t ?? {}) as { type?: string; id?: string; domain?: string | null };
  return [o.type, o.domain ? `${o.domain}/${o.id}` : o.id].filter(Boolean).join(' ');
};
const changesOf = (e: Entry) =>
  e.changes
    ? Object.entries(e.changes)
        .map(([k, v]) => `${k}: ${'from' in v ? `${JSON.stringify(v.from)} → ` : ''}${JSON.stringify(v.to)}`)
        .join('; ')
    : '';

/** Who changed what, when and from where; filter by action, cursor paging. */
export function AuditLog() {
  const [entries, setEntries] = useState<Entry[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [action, setAction] = useState('');
  const [problem, setProblem] = useState<Problem | null>(null);
  const page = async (cursor: string | null, filter = action) => {
    const { data, error, response } = await api.GET('/api/v1/audit-log', {
      params: { query: { limit: 50, ...(cursor ? { cursor } : {}), ...(filter ? { action: filter } : {}) } },
    });
    if (!data || typeof data === 'string') return setProblem(problemOf(error, response));
    setProblem(null);
    setEntries((before) => (cursor ? [...before, ...data.entries] : data.entries));
    setNext(data.nextCursor);
  };
  useEffect(() => {
    page(null);
  }, []);
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit log</h1>
      <form
        class="filters"
        role="search"
        aria-label="Filter the audit log"
        onSubmit={(e) => {
          e.preventDefault();
          const value = String(new FormData(e.currentTarget).get('action') ?? '').trim();
          setAction(value);
          page(null, value);
        }}
      >
        <Field label="Action" name="action" hint="e.g. link.created, or link for all" error={problem?.code === 'VALIDATION_FAILED' ? problem.detail : null} />
        <button type="submit">Filter</button>
      </form>
      {problem?.code !== 'VALIDATION_FAILED' && <ProblemNote problem={problem} />}
      <ScrollRegion label="Audit entries">
        <table id="audit" class="stack">
          <caption class="sr-only">Audit entries, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Action</th>
              <th scope="col">Who</th>
              <th scope="col">Target</th>
              <th scope="col">Changes</th>
              <th scope="col">From</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.id} data-action={e.action}>
                <td class="short">{when(e.at)}</td>
                <td class="act">
                  <code>{e.action}</code>
                </td>
                <td data-label="Who">{e.actor.name}</td>
                <td data-label="Target">{targetOf(e.target)}</td>
                <td class="changes" data-label="Changes">
                  {changesOf(e) || '—'}
                </td>
                <td data-label="From">{e.clientAddress ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
      {next && (
        <button type="button" class="secondary" onClick={() => page(next)}>
          Load more
        </button>
      )}
    </section>
  );
}
