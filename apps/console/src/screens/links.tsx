import { useEffect, useState } from 'preact/hooks';
import { api, type Link, type Problem, problemOf } from '../api/client';
import type { Session } from '../session';
import { bulkDelete, bulkEdit, type BulkResult, clickCounts, copy, linkDomains } from '../links-api';
import { Field, go, Notice, ProblemNote, ScrollRegion, Select, when } from '../ui';
import { DomainOptions } from './domain-options';

const STATUSES = ['active', 'disabled', 'expired'] as const;
type Status = (typeof STATUSES)[number];
/** The dead-link checks' verdicts the list filters by (docs/design.md, "Trust and safety"). */
const HEALTH = [
  ['broken', 'broken'],
  ['ok', 'ok'],
  ['unchecked', 'not checked yet'],
] as const;
type Health = (typeof HEALTH)[number][0];
const key = (l: Pick<Link, 'code' | 'domain'>) => `${l.domain}/${l.code}`;

/** Whether the screen is a phone's (the layout's breakpoint): the filters beyond search start folded there. */
const narrow = () => typeof matchMedia === 'function' && matchMedia('(max-width: 700px)').matches;

/** The tenant's links, newest first, with their clicks: search, tag, status, domain and health filters (in the URL); a broken or moderated link says so beside its status, cursor paging, bulk changes with a result per link. */
export function Links({ session, query }: { session: Session; query: URLSearchParams }) {
  const filters = {
    q: query.get('q') ?? '',
    tag: query.get('tag') ?? '',
    status: (query.get('status') ?? '') as Status | '',
    domain: query.get('domain') ?? '',
    health: (query.get('health') ?? '') as Health | '',
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
  const [clicks, setClicks] = useState<Map<string, number> | null>(null);
  const canWrite = session.can('links:write');
  const showClicks = session.can('analytics:read');

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
          ...(filters.health ? { health: filters.health } : {}),
        },
      },
    });
    setLoading(false);
    if (!data) return setProblem(problemOf(error, response));
    setProblem(null);
    setLinks((before) => (cursor ? [...before, ...data.links] : data.links));
    setNext(data.nextCursor);
    if (showClicks) clickCounts(data.links).then((counts) => setClicks((before) => (cursor && before && counts ? new Map([...before, ...counts]) : counts)));
  };
  useEffect(() => {
    setSelected(new Set());
    page(null);
  }, [filters.q, filters.tag, filters.status, filters.domain, filters.health]);
  useEffect(() => {
    linkDomains(session.settings).then(setDomains);
  }, [session.settings]);
  const more = Boolean(filters.tag || filters.status || filters.domain || filters.health);

  const applyFilters = (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const params = new URLSearchParams();
    for (const name of ['q', 'tag', 'status', 'domain', 'health']) {
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
        ...(filters.health ? { health: filters.health } : {}),
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
        {/* On a phone the other filters start folded (open when one is set), so that the links are on the first screen. */}
        <details class="more-filters" open={more || !narrow()}>
          <summary>Tag, status, domain, health</summary>
          <div class="filters-more">
            <Field label="Tag" name="tag" input={{ defaultValue: filters.tag }} />
            <Field id="f-status" label="Status" name="status">
              <Select id="f-status" name="status" initial={filters.status}>
                <option value="">Any</option>
                {STATUSES.map((s) => (
                  <option key={s} value={s}>
                    {s}
                  </option>
                ))}
              </Select>
            </Field>
            <Field id="f-domain" label="Domain" name="domain">
              <Select id="f-domain" name="domain" initial={filters.domain}>
                <option value="">Any</option>
                <DomainOptions domains={domains} defaultDomain={session.settings.defaultDomain} />
              </Select>
            </Field>
            <Field id="f-health" label="Health" name="health">
              <Select id="f-health" name="health" initial={filters.health}>
                <option value="">Any</option>
                {HEALTH.map(([value, label]) => (
                  <option key={value} value={value}>
                    {label}
                  </option>
                ))}
              </Select>
            </Field>
          </div>
        </details>
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
        // The bulk actions once links are selected: until then they would only take room (a phone's first screen).
        <div class="bulk" aria-live="polite">
          {selected.size > 0 && (
            <>
              <span id="selected-count">{selected.size} selected</span>
              <button type="button" class="secondary" id="bulk-disable" onClick={() => setStatusSelected('disabled')}>
                Disable
              </button>
              <button type="button" class="secondary" id="bulk-enable" onClick={() => setStatusSelected('active')}>
                Enable
              </button>
              <button type="button" class="danger" id="bulk-delete" onClick={deleteSelected}>
                Delete
              </button>
            </>
          )}
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
      <ScrollRegion label="Links">
        <table id="links" class="stack" aria-busy={loading ? 'true' : 'false'}>
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
              {showClicks && <th scope="col">Clicks</th>}
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
                  <td class="select">
                    <input type="checkbox" aria-label={`Select ${l.code}`} checked={selected.has(key(l))} onChange={() => toggle(l)} />
                  </td>
                )}
                <td class="short">
                  <a href={`#/links/${encodeURIComponent(l.code)}?domain=${encodeURIComponent(l.domain)}`} class="code">
                    {l.domain}/{l.code}
                  </a>
                  {l.title && <div class="sub">{l.title}</div>}
                </td>
                <td class="target">
                  <span class="one-line" title={l.url}>
                    {l.url}
                  </span>
                </td>
                <td class="wide-only">
                  {l.tags.map((t) => (
                    <a key={t} class="tag" href={`#/links?tag=${encodeURIComponent(t)}`}>
                      {t}
                    </a>
                  ))}
                </td>
                {showClicks && (
                  <td class="clicks" data-clicks={clicks?.get(key(l))}>
                    <span class="phone-only">Clicks: </span>
                    {clicks ? (clicks.get(key(l)) ?? 0).toLocaleString('en-US') : '—'}
                  </td>
                )}
                <td class="state">
                  <span class={`status ${l.status}`}>{l.status}</span>
                  {l.health?.state === 'broken' && (
                    <span
                      class="status broken"
                      data-health="broken"
                      title={`Broken since ${when(l.health.since)}: ${l.health.lastStatus ? `HTTP ${l.health.lastStatus}` : (l.health.lastError ?? '')}`}
                    >
                      {' '}
                      broken
                    </span>
                  )}
                  {l.moderation.state !== 'clear' && (
                    <span class={`status ${l.moderation.state}`} data-moderation={l.moderation.state}>
                      {' '}
                      {l.moderation.state}
                    </span>
                  )}
                </td>
                <td class="wide-only">{when(l.createdAt)}</td>
                <td class="act">
                  <button type="button" class="secondary small" onClick={() => copyShort(l)} aria-label={`Copy ${l.shortUrl}`}>
                    Copy
                  </button>
                  {showClicks && (
                    <a
                      class="button secondary small"
                      href={`#/analytics?code=${encodeURIComponent(l.code)}&domain=${encodeURIComponent(l.domain)}`}
                      aria-label={`Analytics of ${l.domain}/${l.code}`}
                    >
                      Analytics
                    </a>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
      {!loading && !links.length && !problem && <p id="no-links">No links match.</p>}
      {next && (
        <button type="button" class="secondary" id="more" disabled={loading} onClick={() => page(next)}>
          Load more
        </button>
      )}
    </section>
  );
}
