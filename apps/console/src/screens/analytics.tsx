/**
 * Analytics, in the console's session (README, "The console"): the tenant's clicks over a range
 * (totals, a chart with buckets sized to the range, the top links with their titles, a deleted
 * one marked), or one link's (its title and target, the chart, breakdowns with A/B variants named
 * by their URL; an unknown code is said to be unknown, not shown as zero clicks); CSV of what is
 * shown; a live counter from the click stream. Reads the analytics app's query API through the
 * generation app's relay (api/analytics-client.ts). Its own chunk, loaded when opened.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { type AnalyticsSchemas, analyticsApi, type Breakdown, type LinkStats, relayed, type TenantOverview } from '../api/analytics-client';
import { api, type Link, type Problem, problemOf } from '../api/client';
import { ClicksChart, ShareBar } from '../analytics/chart';
import { countLiveClicks, type LiveState } from '../analytics/live';
import { type Bucket, bucketSeconds, type Dimension, RANGES, type RangeId, rangeParams, rebucket, valueLabel } from '../analytics/series';
import { Field, go, ProblemNote, ScrollRegion, useRoute } from '../ui';
import '../analytics/analytics.css';

const DIMENSIONS: ReadonlyArray<{ dimension: Dimension; title: string }> = [
  { dimension: 'countries', title: 'Countries' },
  { dimension: 'cities', title: 'Cities' },
  { dimension: 'referers', title: 'Referers' },
  { dimension: 'sources', title: 'Sources (QR code or link)' },
  { dimension: 'devices', title: 'Devices' },
  { dimension: 'browsers', title: 'Browsers' },
  { dimension: 'os', title: 'Operating systems' },
  { dimension: 'variants', title: 'A/B variants' },
];

interface Query {
  code: string;
  domain: string;
  range: RangeId;
  from: string;
  to: string;
  bots: boolean;
}

function queryOf(q: URLSearchParams): Query {
  const range = q.get('range');
  return {
    code: (q.get('code') ?? '').trim(),
    domain: (q.get('domain') ?? '').trim(),
    range: RANGES.some((r) => r.id === range) ? (range as RangeId) : '24h',
    from: q.get('from') ?? '',
    to: q.get('to') ?? '',
    bots: q.get('bots') === 'include',
  };
}

/** The screen's address for a query (what a top link or the form leads to). */
export function analyticsHash(q: Partial<Query>): string {
  const p = new URLSearchParams();
  if (q.code) p.set('code', q.code);
  if (q.domain) p.set('domain', q.domain);
  if (q.range && q.range !== '24h') p.set('range', q.range);
  if (q.range === 'custom') {
    p.set('from', q.from ?? '');
    p.set('to', q.to ?? '');
  }
  if (q.bots) p.set('bots', 'include');
  const s = p.toString();
  return `#/analytics${s ? `?${s}` : ''}`;
}

type Chart = { buckets: Bucket[]; size: number };
type View =
  | { kind: 'loading' }
  | { kind: 'error' }
  | { kind: 'not-found'; code: string; domain: string }
  | { kind: 'overview'; data: TenantOverview; chart: Chart }
  | { kind: 'link'; link: Link | null; linkProblem: Problem | null; stats: LinkStats; chart: Chart; breakdowns: Breakdown[] };

const fmt = (n: number) => n.toLocaleString('en-US');

function chartOf(data: {
  from: string;
  to: string;
  granularity: 'minute' | 'hour' | 'day';
  series: ReadonlyArray<{ time: string; clicks: number; botClicks: number }>;
}): Chart {
  const span = (Date.parse(data.to) - Date.parse(data.from)) / 1000;
  const size = bucketSeconds(span, data.granularity);
  return { size, buckets: rebucket(data.series, data.from, data.to, size) };
}

function download(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function Analytics() {
  const { query } = useRoute();
  const q = queryOf(query);
  const key = analyticsHash(q);
  const [form, setForm] = useState<Query>(q);
  const [view, setView] = useState<View>({ kind: 'loading' });
  const [problem, setProblem] = useState<Problem | null>(null);
  const [csvProblem, setCsvProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const [refreshed, setRefreshed] = useState(0);
  const seq = useRef(0);

  useEffect(() => setForm(q), [key]);

  useEffect(() => {
    const mine = ++seq.current;
    const current = () => mine === seq.current;
    setBusy(true);
    (async () => {
      const r = rangeParams(q.range, { from: q.from, to: q.to }, Date.now());
      const span = { from: r.from, to: r.to, granularity: r.granularity, bots: q.bots ? ('include' as const) : ('exclude' as const) };
      const onDomain = q.domain ? { domain: q.domain } : {};
      if (!q.code) {
        const { data, error, response } = await analyticsApi.GET('/api/v1/stats/overview', { params: { query: { ...span, ...onDomain, limit: 10 } } });
        if (!current()) return;
        if (!data || typeof data === 'string') {
          setProblem(problemOf(error, response));
          setView({ kind: 'error' });
          return;
        }
        setProblem(null);
        setView({ kind: 'overview', data, chart: chartOf(data) });
        return;
      }
      const code = q.code;
      const [linkRes, statsRes] = await Promise.all([
        api.GET('/api/v1/links/{code}', { params: { path: { code }, query: onDomain } }),
        analyticsApi.GET('/api/v1/links/{code}/stats', { params: { path: { code }, query: { ...span, ...onDomain } } }),
      ]);
      if (!current()) return;
      const stats = statsRes.data;
      if (!stats || typeof stats === 'string') {
        setProblem(problemOf(statsRes.error, statsRes.response));
        setView({ kind: 'error' });
        return;
      }
      setProblem(null);
      const linkProblem = linkRes.data ? null : problemOf(linkRes.error, linkRes.response);
      // No such link, and no clicks of one: unknown, not "0 clicks".
      if (linkProblem?.code === 'LINK_NOT_FOUND' && stats.totals.clicks === 0 && stats.botClicks === 0) {
        setView({ kind: 'not-found', code, domain: stats.domain });
        return;
      }
      const breakdowns = await Promise.all(
        DIMENSIONS.map(({ dimension }) =>
          analyticsApi
            .GET('/api/v1/links/{code}/breakdown/{dimension}', { params: { path: { code, dimension }, query: { ...span, ...onDomain, limit: 10 } } })
            .then(({ data }) => (data && typeof data !== 'string' ? data : null)),
        ),
      );
      if (!current()) return;
      setView({
        kind: 'link',
        link: linkRes.data ?? null,
        linkProblem,
        stats,
        chart: chartOf(stats),
        breakdowns: breakdowns.filter((b): b is Breakdown => b !== null),
      });
    })()
      .catch((e: unknown) => {
        if (!current()) return;
        setProblem(problemOf(e));
        setView({ kind: 'error' });
      })
      .finally(() => current() && setBusy(false));
  }, [key, refreshed]);

  const apply = (e: Event) => {
    e.preventDefault();
    const next = analyticsHash(form);
    if (next === key) setRefreshed((n) => n + 1);
    else go(next);
  };

  const csv = async () => {
    setCsvProblem(null);
    const r = rangeParams(q.range, { from: q.from, to: q.to }, Date.now());
    const span = { from: r.from, to: r.to, granularity: r.granularity, bots: q.bots ? ('include' as const) : ('exclude' as const), format: 'csv' as const };
    const onDomain = q.domain ? { domain: q.domain } : {};
    const answer = q.code
      ? await analyticsApi.GET('/api/v1/links/{code}/stats', { params: { path: { code: q.code }, query: { ...span, ...onDomain } }, parseAs: 'blob' })
      : await analyticsApi.GET('/api/v1/stats/overview', { params: { query: { ...span, ...onDomain } }, parseAs: 'blob' });
    if (!answer.response.ok || !(answer.data instanceof Blob)) {
      setCsvProblem(problemOf(answer.error, answer.response));
      return;
    }
    download(answer.data, q.code ? `${q.code}-stats.csv` : 'overview.csv');
  };

  // A refused range is said beside the range; any other problem beside the form.
  const rangeProblem =
    problem && (problem.code === 'INVALID_TIME_RANGE' || problem.errors?.some((e) => ['from', 'to', 'granularity'].includes(e.path.split('.').pop() ?? '')))
      ? problem
      : null;
  const heading =
    view.kind === 'link'
      ? (view.link?.title ?? `${view.stats.domain}/${view.stats.code}`)
      : q.code
        ? `${q.domain ? `${q.domain}/` : ''}${q.code}`
        : 'All links';

  return (
    <section aria-labelledby="analytics-title" id="analytics-screen" data-view={view.kind} aria-busy={busy ? 'true' : undefined}>
      <div class="title-row">
        <h1 id="analytics-title">Analytics: {heading}</h1>
      </div>
      <form class="filters analytics-controls" id="analytics-form" aria-label="What to show" onSubmit={apply}>
        <LinkPicker
          code={form.code}
          domain={form.domain}
          onChoose={(l) => {
            const next = { ...form, code: l?.code ?? '', domain: l?.domain ?? '' };
            setForm(next);
            go(analyticsHash(next));
          }}
        />
        <Field label="Range" name="range" id="analytics-range">
          <select
            id="analytics-range"
            name="range"
            value={form.range}
            aria-describedby={rangeProblem ? 'range-error' : undefined}
            onChange={(e) => setForm({ ...form, range: e.currentTarget.value as RangeId })}
          >
            {RANGES.map((r) => (
              <option key={r.id} value={r.id}>
                {r.label}
              </option>
            ))}
          </select>
        </Field>
        {form.range === 'custom' && (
          <>
            <Field
              label="From"
              name="from"
              input={{
                type: 'datetime-local',
                value: form.from,
                onInput: (e) => setForm({ ...form, from: e.currentTarget.value }),
                'aria-invalid': rangeProblem ? 'true' : undefined,
                'aria-describedby': rangeProblem ? 'range-error' : undefined,
              }}
            />
            <Field
              label="To"
              name="to"
              input={{
                type: 'datetime-local',
                value: form.to,
                onInput: (e) => setForm({ ...form, to: e.currentTarget.value }),
                'aria-invalid': rangeProblem ? 'true' : undefined,
                'aria-describedby': rangeProblem ? 'range-error' : undefined,
              }}
            />
          </>
        )}
        <label class="check">
          <input type="checkbox" name="bots" checked={form.bots} onChange={(e) => setForm({ ...form, bots: e.currentTarget.checked })} /> Include bots
        </label>
        <div class="actions">
          <button type="submit" id="show-analytics">
            Show
          </button>
          <button type="button" class="secondary" id="csv" onClick={csv} disabled={view.kind === 'error' || view.kind === 'not-found'}>
            Download CSV
          </button>
        </div>
      </form>
      {rangeProblem && (
        <p class="error" role="alert" id="range-error" data-code={rangeProblem.code}>
          {rangeProblem.detail}
        </p>
      )}
      {problem && !rangeProblem && <ProblemNote problem={problem} id="analytics-error" />}
      <ProblemNote problem={csvProblem} id="csv-error" />
      <p class="sub" role="status" id="analytics-status">
        {busy ? 'Loading…' : view.kind === 'loading' ? '' : `Updated ${new Date().toLocaleTimeString()}`}
      </p>

      {view.kind === 'not-found' && (
        <p class="unknown" id="not-found" role="status">
          Not found: there is no link <code>{view.code}</code> on {view.domain}, and no clicks of one in this range.
        </p>
      )}
      {view.kind === 'link' && <LinkHeader view={view} />}
      {(view.kind === 'overview' || view.kind === 'link') && (
        <>
          <Numbers
            clicks={view.kind === 'overview' ? view.data.totals.clicks : view.stats.totals.clicks}
            visitors={view.kind === 'overview' ? view.data.totals.visitors : view.stats.totals.visitors}
            bots={view.kind === 'overview' ? view.data.botClicks : view.stats.botClicks}
            code={q.code}
            domain={q.domain}
          />
          <div class="card">
            <h2>Clicks over time</h2>
            <ClicksChart buckets={view.chart.buckets} size={view.chart.size} />
          </div>
        </>
      )}
      {view.kind === 'overview' && <TopLinks links={view.data.links} q={q} />}
      {view.kind === 'link' && (
        <div class="analytics-grid">
          {view.breakdowns.map((b) => (
            <BreakdownCard key={b.dimension} breakdown={b} variants={view.link?.variants ?? null} />
          ))}
        </div>
      )}
    </section>
  );
}

/**
 * Which link: all of them, or one found by its code, title or target (the links API's search) and
 * chosen from the matches, with its domain: nothing to type exactly.
 */
function LinkPicker({ code, domain, onChoose }: { code: string; domain: string; onChoose: (link: Pick<Link, 'code' | 'domain'> | null) => void }) {
  const [q, setQ] = useState('');
  const [matches, setMatches] = useState<Link[] | null>(null);
  const seq = useRef(0);
  useEffect(() => {
    const mine = ++seq.current;
    if (!q.trim()) return setMatches(null);
    const timer = setTimeout(async () => {
      const { data } = await api.GET('/api/v1/links', { params: { query: { q: q.trim(), limit: 8 } } });
      if (mine === seq.current) setMatches(data?.links ?? []);
    }, 200);
    return () => clearTimeout(timer);
  }, [q]);
  return (
    <div class="link-picker">
      <p class="chosen" id="analytics-chosen">
        <span class="label">Link:</span> {code ? <code>{`${domain ? `${domain}/` : ''}${code}`}</code> : 'all your links'}{' '}
        {code && (
          <button type="button" class="link" id="all-links" onClick={() => onChoose(null)}>
            All links
          </button>
        )}
      </p>
      <Field
        label="Find a link"
        name="find"
        hint="Its code, title or target"
        input={{ type: 'search', value: q, onInput: (e) => setQ(e.currentTarget.value), autocomplete: 'off', spellcheck: false }}
      />
      {matches && (
        <ul class="matches" id="link-matches" aria-label="Links found">
          {matches.length === 0 && <li class="sub">No link matches.</li>}
          {matches.map((l) => (
            <li key={`${l.domain}/${l.code}`}>
              <button
                type="button"
                class="secondary small"
                data-code={l.code}
                onClick={() => {
                  onChoose(l);
                  setQ('');
                }}
              >
                {l.domain}/{l.code}
                {l.title ? ` — ${l.title}` : ''}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function LinkHeader({ view }: { view: Extract<View, { kind: 'link' }> }) {
  const { link, stats, linkProblem } = view;
  return (
    <div class="card link-head" id="analytics-link">
      <p class="short">
        {stats.domain}/{stats.code}
      </p>
      {link ? (
        <dl class="details compact">
          <div>
            <dt>Title</dt>
            <dd id="analytics-link-title">{link.title ?? '—'}</dd>
          </div>
          <div>
            <dt>Target</dt>
            <dd id="analytics-link-target" class="code">
              <a href={link.url} rel="noreferrer noopener" target="_blank">
                {link.url}
              </a>
            </dd>
          </div>
          <div>
            <dt>Status</dt>
            <dd>
              <span class={`status ${link.status}`}>{link.status}</span>{' '}
              <a href={`#/links/${encodeURIComponent(link.code)}?domain=${encodeURIComponent(link.domain)}`} id="open-link">
                Open the link
              </a>
            </dd>
          </div>
        </dl>
      ) : linkProblem?.code === 'LINK_NOT_FOUND' ? (
        <p class="badge deleted" id="link-deleted">
          Deleted: this code is no longer one of your links; its clicks are kept.
        </p>
      ) : (
        <ProblemNote problem={linkProblem} id="link-problem" />
      )}
    </div>
  );
}

function Numbers(props: { clicks: number; visitors: number; bots: number; code: string; domain: string }) {
  return (
    <div class="numbers">
      <div class="card number">
        <span class="label">Clicks</span>
        <span class="value" id="total-clicks">
          {fmt(props.clicks)}
        </span>
      </div>
      <div class="card number">
        <span class="label">Unique visitors</span>
        <span class="value" id="total-visitors">
          {fmt(props.visitors)}
        </span>
      </div>
      <div class="card number">
        <span class="label">Bot clicks</span>
        <span class="value" id="total-bots">
          {fmt(props.bots)}
        </span>
      </div>
      <LiveCounter code={props.code} domain={props.domain} />
    </div>
  );
}

/** Clicks since the screen opened, from the live stream (bots left out), of the link shown or of all. */
function LiveCounter({ code, domain }: { code: string; domain: string }) {
  const [live, setLive] = useState<LiveState>({ state: 'connecting', clicks: 0, note: null });
  useEffect(() => {
    const p = new URLSearchParams({ bots: 'exclude' });
    if (code) p.set('code', code);
    if (domain) p.set('domain', domain);
    setLive({ state: 'connecting', clicks: 0, note: null });
    return countLiveClicks(`${relayed('/api/v1/events/stream')}?${p}`, setLive);
  }, [code, domain]);
  const words = live.state === 'open' ? 'live' : live.state === 'connecting' ? 'connecting…' : 'not connected';
  return (
    <div class="card number live" id="live" data-state={live.state}>
      <span class="label">Live clicks since you opened this</span>
      <span class="value" id="live-clicks" aria-live="polite">
        {fmt(live.clicks)}
      </span>
      <span class="sub" id="live-state">
        {words}
        {live.note ? ` (${live.note})` : ''}
      </span>
    </div>
  );
}

function TopLinks({ links, q }: { links: TenantOverview['links']; q: Query }) {
  return (
    <div class="card">
      <h2 id="top-links-title">Top links</h2>
      {links.length === 0 ? (
        <p id="no-top-links">No clicks in this range.</p>
      ) : (
        <ScrollRegion label="Top links">
          <table id="top-links" aria-labelledby="top-links-title">
            <thead>
              <tr>
                <th scope="col">Link</th>
                <th scope="col">Title and target</th>
                <th scope="col">Clicks</th>
                <th scope="col">Visitors</th>
              </tr>
            </thead>
            <tbody>
              {links.map((l) => (
                <tr key={`${l.domain}/${l.code}`} data-code={l.code} data-deleted={l.deleted === true ? 'true' : undefined}>
                  <td class="code">
                    <a href={analyticsHash({ ...q, code: l.code, domain: l.domain })}>
                      {l.domain}/{l.code}
                    </a>
                    {l.deleted === true && <span class="badge deleted">deleted</span>}
                    {l.status && l.status !== 'active' && <span class={`status ${l.status}`}> {l.status}</span>}
                  </td>
                  <td class="target">
                    {l.deleted === false ? (
                      <>
                        <a href={`#/links/${encodeURIComponent(l.code)}?domain=${encodeURIComponent(l.domain)}`}>{l.title ?? l.url}</a>
                        {l.title && <div class="sub">{l.url}</div>}
                      </>
                    ) : l.deleted === true ? (
                      <span class="sub">no longer a link</span>
                    ) : (
                      <span class="sub">unknown (the link store did not answer)</span>
                    )}
                  </td>
                  <td>{fmt(l.clicks)}</td>
                  <td>{fmt(l.visitors)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
    </div>
  );
}

function BreakdownCard({ breakdown, variants }: { breakdown: Breakdown; variants: ReadonlyArray<{ url: string }> | null }) {
  const d = breakdown.dimension as Dimension;
  const title = DIMENSIONS.find((x) => x.dimension === d)?.title ?? d;
  const items: AnalyticsSchemas['Breakdown']['items'] = breakdown.items;
  return (
    // A card that may scroll sideways on a narrow screen: a labelled region the keyboard reaches.
    <div class="card" id={`breakdown-${d}`} role="region" aria-labelledby={`breakdown-${d}-title`} tabIndex={0}>
      <h2 id={`breakdown-${d}-title`}>{title}</h2>
      {items.length === 0 ? (
        <p class="sub">No clicks in this range.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">{title}</th>
              <th scope="col">Clicks</th>
              <th scope="col">Share</th>
            </tr>
          </thead>
          <tbody>
            {items.map((i) => (
              <tr key={`${i.value}-${i.country ?? ''}-${i.region ?? ''}`} data-value={i.value ?? ''}>
                <td class="target">
                  {valueLabel(d, i.value, variants)}
                  {d === 'cities' && i.country ? <span class="sub"> {[i.region, i.country].filter(Boolean).join(', ')}</span> : null}
                </td>
                <td>{fmt(i.clicks)}</td>
                <td>
                  <ShareBar share={i.share} /> <span class="sub">{(i.share * 100).toFixed(1)} %</span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
