import { useEffect, useState } from 'preact/hooks';
import { api, type Link, type Problem, problemOf } from '../api/client';
import type { Session } from '../session';
import { bulkDelete, bulkEdit, type BulkResult, copy, domainNames } from '../links-api';
import { Field, go, Notice, ProblemNote, when } from '../ui';

const STATUSES = ['active', 'disabled', 'expired'] as const;
type Status = (typeof STATUSES)[number];
const key = (l: Pick<Link, 'code' | 'domain'>) => `${l.domain}/${l.code}`;

/** The tenant's links, newest first: search, tag, status and domain filters (in the URL), cursor paging, bulk delete with a result per link. */
export function Links({ session, query }: { session: Session; query: URLSearchParams }) {
  const filters = {
    q: query.get('q') ?? '',
    tag: query.get('tag') ?? '',
    status: (query.get('status') ?? '') as Status | '',
    domain: query.get('domain') ?? '',
  };
  const [links, setLinks] = useState<Link[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [loading, setLoading] = useState(true);
  const [domains, setDomains] = useState<string[]>([]);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [results, setResults] = useState<{ action: 'delete' | 'disable' | 'enable'; lines: BulkResult[] } | null>(null);
  const [bulkProblem, setBulkProblem] = useState<Problem | null>(null);
  const [copied, setCopied] = useState<string | null>(null);
  const [exporting, setExporting] = useState<string | null>(null);
  const [exportProblem, setExportProblem] = useState<Problem | null>(null);
  const canWrite = session.can('links:write');

  const page = async (cursor: string | null) => {
    setLoading(true);
    const { data, error, response } = await api.GET('/api/v1/links', {
      params: {
        query: {
          limit: 25,
          ...(cursor ? { cursor } : {}),
          ...(filters.q ? { q: filters.q } : {}),
          ...(filters.tag ? { tag: filters.tag } : {}),
          ...(filters.status ? { status: filters.status } : {}),
          ...(filters.domain ? { domain: filters.domain } : {}),
        },
      },
    });
    setLoading(false);
    if (!data) return setProblem(problemOf(error, response));
    setProblem(null);
    setLinks((before) => (cursor ? [...before, ...data.links] : data.links));
    setNext(data.nextCursor);
  };
  useEffect(() => {
    setSelected(new Set());
    page(null);
  }, [filters.q, filters.tag, filters.status, filters.domain]);
  useEffect(() => {
    domainNames().then(setDomains);
  }, []);

  const applyFilters = (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const params = new URLSearchParams();
    for (const name of ['q', 'tag', 'status', 'domain']) {
      const value = String(f.get(name) ?? '').trim();
      if (value) params.set(name, value);
    }
    go(`#/links${params.size ? `?${params}` : ''}`);
  };
  const toggle = (l: Link) => {
    const s = new Set(selected);
    if (s.has(key(l))) s.delete(key(l));
    else s.add(key(l));
    setSelected(s);
  };
  const allSelected = links.length > 0 && links.every((l) => selected.has(key(l)));
  const deleteSelected = async () => {
    const chosen = links.filter((l) => selected.has(key(l)));
    if (!chosen.length || !confirm(`Delete ${chosen.length} link${chosen.length > 1 ? 's' : ''}? Their codes are not handed out again for 90 days.`)) return;
    const outcome = await bulkDelete(chosen);
    if ('problem' in outcome) return setBulkProblem(outcome.problem);
    setBulkProblem(null);
    setResults({ action: 'delete', lines: outcome.results });
    const deleted = new Set(outcome.results.filter((r) => r.status === 204).map(key));
    setLinks(links.filter((l) => !deleted.has(key(l))));
    setSelected(new Set([...selected].filter((k) => !deleted.has(k))));
  };
  const setStatusSelected = async (status: 'active' | 'disabled') => {
    const chosen = links.filter((l) => selected.has(key(l)));
    if (!chosen.length) return;
    const outcome = await bulkEdit(chosen, { status });
    if ('problem' in outcome) return setBulkProblem(outcome.problem);
    setBulkProblem(null);
    setResults({ action: status === 'disabled' ? 'disable' : 'enable', lines: outcome.results });
    const edited = new Map(outcome.results.filter((r) => r.link).map((r) => [key(r), r.link!]));
    setLinks(links.map((l) => edited.get(key(l)) ?? l));
  };
  const exportFiltered = async () => {
    setExportProblem(null);
    setExporting('Exporting…');
    const { exportCsv } = await import('../export');
    const outcome = await exportCsv(
      {
        ...(filters.q ? { q: filters.q } : {}),
        ...(filters.tag ? { tag: filters.tag } : {}),
        ...(filters.status ? { status: filters.status } : {}),
        ...(filters.domain ? { domain: filters.domain } : {}),
      },
      (n) => setExporting(`Exporting… ${n} links`),
    );
    if ('problem' in outcome) {
      setExporting(null);
      return setExportProblem(outcome.problem);
    }
    const url = URL.createObjectURL(new Blob([outcome.csv], { type: 'text/csv' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = 'links.csv';
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    setExporting(`Exported ${outcome.count} links`);
  };
  const copyShort = async (l: Link) => {
    setCopied((await copy(l.shortUrl)) ? l.shortUrl : null);
  };

  return (
    <section aria-labelledby="links-title">
      <div class="title-row">
        <h1 id="links-title">Links</h1>
        {canWrite && (
          <a class="button" href="#/links/new" id="new-link">
            New link
          </a>
        )}
      </div>
      <form key={`${query}|${domains.length}`} class="filters" role="search" aria-label="Filter links" onSubmit={applyFilters}>
        <Field label="Search" name="q" input={{ type: 'search', defaultValue: filters.q, placeholder: 'code, title or target' }} />
        <Field label="Tag" name="tag" input={{ defaultValue: filters.tag }} />
        <Field id="f-status" label="Status" name="status">
          <select id="f-status" name="status" defaultValue={filters.status}>
            <option value="">Any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </Field>
        <Field id="f-domain" label="Domain" name="domain">
          <select id="f-domain" name="domain" defaultValue={filters.domain}>
            <option value="">Any</option>
            {domains.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        </Field>
        <button type="submit" id="apply-filters">
          Filter
        </button>
      </form>
      <div class="actions">
        {canWrite && (
          <button type="button" class="secondary" id="export" onClick={exportFiltered}>
            Export these links (CSV)
          </button>
        )}
        {exporting && (
          <span role="status" id="export-status">
            {exporting}
          </span>
        )}
        <ProblemNote problem={exportProblem} />
      </div>
      <ProblemNote problem={problem} id="links-error" />
      {copied && <Notice>Copied {copied}</Notice>}
      {canWrite && (
        <div class="bulk" aria-live="polite">
          <span id="selected-count">{selected.size} selected</span>
          <button type="button" class="secondary" id="bulk-disable" disabled={!selected.size} onClick={() => setStatusSelected('disabled')}>
            Disable selected
          </button>
          <button type="button" class="secondary" id="bulk-enable" disabled={!selected.size} onClick={() => setStatusSelected('active')}>
            Enable selected
          </button>
          <button type="button" class="danger" id="bulk-delete" disabled={!selected.size} onClick={deleteSelected}>
            Delete selected
          </button>
          <ProblemNote problem={bulkProblem} />
        </div>
      )}
      {results && (
        <div class="results" id="bulk-results" role="status">
          <h2>
            Bulk {results.action}: {results.lines.filter((r) => r.status < 300).length} {results.action === 'delete' ? 'deleted' : `${results.action}d`},{' '}
            {results.lines.filter((r) => r.status >= 300).length} failed
          </h2>
          <ul>
            {results.lines.map((r) => (
              <li key={key(r)} data-status={r.status}>
                {r.domain}/{r.code}:{' '}
                {r.status < 300
                  ? results.action === 'delete'
                    ? 'deleted'
                    : `${results.action}d`
                  : `${r.problem?.code ?? r.status}: ${r.problem?.detail ?? ''}`}
              </li>
            ))}
          </ul>
          <button type="button" class="secondary" onClick={() => setResults(null)}>
            Dismiss
          </button>
        </div>
      )}
      <div class="table-wrap">
        <table id="links" aria-busy={loading ? 'true' : 'false'}>
          <caption class="sr-only">Links, newest first</caption>
          <thead>
            <tr>
              {canWrite && (
                <th scope="col">
                  <input
                    type="checkbox"
                    aria-label="Select all links shown"
                    checked={allSelected}
                    onChange={() => setSelected(allSelected ? new Set() : new Set(links.map(key)))}
                  />
                </th>
              )}
              <th scope="col">Short URL</th>
              <th scope="col">Target</th>
              <th scope="col" class="wide-only">
                Tags
              </th>
              <th scope="col">Status</th>
              <th scope="col" class="wide-only">
                Created
              </th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {links.map((l) => (
              <tr key={key(l)} data-code={l.code}>
                {canWrite && (
                  <td>
                    <input type="checkbox" aria-label={`Select ${l.code}`} checked={selected.has(key(l))} onChange={() => toggle(l)} />
                  </td>
                )}
                <td>
                  <a href={`#/links/${encodeURIComponent(l.code)}?domain=${encodeURIComponent(l.domain)}`} class="code">
                    {l.domain}/{l.code}
                  </a>
                  {l.title && <div class="sub">{l.title}</div>}
                </td>
                <td class="target">{l.url}</td>
                <td class="wide-only">
                  {l.tags.map((t) => (
                    <a key={t} class="tag" href={`#/links?tag=${encodeURIComponent(t)}`}>
                      {t}
                    </a>
                  ))}
                </td>
                <td>
                  <span class={`status ${l.status}`}>{l.status}</span>
                </td>
                <td class="wide-only">{when(l.createdAt)}</td>
                <td>
                  <button type="button" class="secondary small" onClick={() => copyShort(l)} aria-label={`Copy ${l.shortUrl}`}>
                    Copy
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {!loading && !links.length && !problem && <p id="no-links">No links match.</p>}
      {next && (
        <button type="button" class="secondary" id="more" disabled={loading} onClick={() => page(next)}>
          Load more
        </button>
      )}
    </section>
  );
}
