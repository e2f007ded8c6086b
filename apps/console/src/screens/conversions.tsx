/**
 * Conversions in the console (docs/console.md, "Conversions"): per link, or per value of a click
 * dimension (country, device, A/B variant, …: which variant converts), the funnel clicks → leads →
 * sales, the revenue per currency and the conversion rates over a range, and the same per day (hour,
 * minute) below, from the analytics app's `GET /api/v1/stats/conversions[/breakdown/{dimension},
 * /series]` through the generation app's relay. Its own chunk, loaded when opened.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { type AnalyticsSchemas, analyticsApi } from '../api/analytics-client';
import { type Problem, problemOf } from '../api/client';
import { type Dimension, type Granularity, RANGES, type RangeId, rangeParams, valueLabel } from '../analytics/series';
import { go, ProblemNote, ScrollRegion, useRoute } from '../ui';
import { analyticsHash } from './analytics';
import '../analytics/analytics.css';

type Funnel = AnalyticsSchemas['ConversionFunnel'];
type ByValue = AnalyticsSchemas['ConversionBreakdown'];
type Series = AnalyticsSchemas['ConversionSeries'];

/** What the funnel may be broken down by: the links, or a dimension of the clicks. */
const BREAKDOWNS: ReadonlyArray<{ id: '' | Dimension; label: string }> = [
  { id: '', label: 'Link' },
  { id: 'variants', label: 'A/B variant' },
  { id: 'countries', label: 'Country' },
  { id: 'cities', label: 'City' },
  { id: 'referers', label: 'Referer' },
  { id: 'sources', label: 'Source (QR code or link)' },
  { id: 'devices', label: 'Device' },
  { id: 'browsers', label: 'Browser' },
  { id: 'os', label: 'Operating system' },
];
/** The series' buckets per range: a few dozen rows at most. */
const SERIES_BUCKET: Readonly<Record<Exclude<RangeId, 'custom'>, Granularity>> = { '1h': 'minute', '24h': 'hour', '7d': 'day', '30d': 'day' };

const fmt = (n: number) => n.toLocaleString('en-US');
const pct = (r: number | null) => (r === null ? '–' : `${(r * 100).toLocaleString('en-US', { maximumFractionDigits: 1 })} %`);

/** Minor units in the currency's own format (`{EUR: 4900}` → "€49.00"), one line per currency. */
export function money(revenue: Readonly<Record<string, number>>): string[] {
  return Object.entries(revenue)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, minor]) => {
      let digits = 2;
      try {
        digits = new Intl.NumberFormat('en-US', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
        return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(minor / 10 ** digits);
      } catch {
        return `${(minor / 10 ** digits).toFixed(digits)} ${currency}`;
      }
    });
}

/** A step of the funnel as a bar: its share of the step before (0 to 1). */
function Step({ label, value, rate }: { label: string; value: number; rate?: number | null }) {
  return (
    <div class="funnel-step">
      <span class="funnel-label">{label}</span>
      <span class="funnel-value">{fmt(value)}</span>
      {rate !== undefined && <span class="funnel-rate">{pct(rate)}</span>}
    </div>
  );
}

export function Conversions() {
  const { query } = useRoute();
  const range = (RANGES.some((r) => r.id === query.get('range') && r.id !== 'custom') ? query.get('range') : '30d') as Exclude<RangeId, 'custom'>;
  const by = (BREAKDOWNS.find((b) => b.id === query.get('by'))?.id ?? '') as '' | Dimension;
  const [data, setData] = useState<Funnel | null>(null);
  const [byValue, setByValue] = useState<ByValue | null>(null);
  const [series, setSeries] = useState<Series | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(true);
  const seq = useRef(0);

  useEffect(() => {
    const mine = ++seq.current;
    setBusy(true);
    const r = rangeParams(range, { from: '', to: '' }, Date.now());
    const span = { from: r.from, to: r.to };
    Promise.all([
      analyticsApi.GET('/api/v1/stats/conversions', { params: { query: { ...span, granularity: r.granularity, limit: 100 } } }),
      by === ''
        ? Promise.resolve(null)
        : analyticsApi.GET('/api/v1/stats/conversions/breakdown/{dimension}', {
            params: { path: { dimension: by }, query: { ...span, granularity: r.granularity, limit: 50 } },
          }),
      analyticsApi.GET('/api/v1/stats/conversions/series', { params: { query: { ...span, granularity: SERIES_BUCKET[range] } } }),
    ])
      .then(([links, values, buckets]) => {
        if (mine !== seq.current) return;
        const failed = [links, values, buckets].find((a) => a !== null && (!a.data || typeof a.data === 'string'));
        if (failed) {
          setProblem(problemOf(failed.error, failed.response));
          setData(null);
          return;
        }
        setProblem(null);
        setData(links.data as Funnel);
        setByValue((values?.data as ByValue | undefined) ?? null);
        setSeries(buckets.data as Series);
      })
      .catch((e: unknown) => mine === seq.current && setProblem(problemOf(e)))
      .finally(() => mine === seq.current && setBusy(false));
  }, [range, by]);
  const totals = by !== '' && byValue ? byValue.totals : data?.totals;
  const to = (next: { range?: string; by?: string }) => {
    const q = new URLSearchParams({ range: next.range ?? range, ...((next.by ?? by) ? { by: next.by ?? by } : {}) });
    go(`#/conversions?${q}`);
  };

  return (
    <section aria-labelledby="conversions-title" id="conversions" aria-busy={busy ? 'true' : 'false'}>
      <h1 id="conversions-title">Conversions</h1>
      <p class="hint">
        Clicks of your links with conversion tracking, the leads and sales your backend (or Stripe) reported for them, and the revenue: per link, or per
        country, device, A/B variant… of the clicks they came by (which variant converts).
      </p>
      <div class="conversions-controls">
        <span>
          <label for="conversions-range">Range</label>{' '}
          <select id="conversions-range" value={range} onChange={(e) => to({ range: (e.target as HTMLSelectElement).value })}>
            {RANGES.filter((r) => r.id !== 'custom').map((r) => (
              <option key={r.id} value={r.id}>
                {r.label}
              </option>
            ))}
          </select>
        </span>
        <span>
          <label for="conversions-by">Per</label>{' '}
          <select id="conversions-by" value={by} onChange={(e) => to({ by: (e.target as HTMLSelectElement).value })}>
            {BREAKDOWNS.map((b) => (
              <option key={b.id} value={b.id}>
                {b.label}
              </option>
            ))}
          </select>
        </span>
      </div>
      <ProblemNote problem={problem} />
      {data && totals && (
        <>
          <div class="funnel" id="funnel-totals" aria-label={by === '' ? 'All links with conversions' : 'All links'}>
            <Step label="Clicks" value={totals.clicks} />
            <Step label="Leads" value={totals.leads} rate={totals.leadRate} />
            <Step label="Sales" value={totals.sales} rate={totals.saleRate} />
            <div class="funnel-step">
              <span class="funnel-label">Revenue</span>
              <span class="funnel-value" id="funnel-revenue">
                {money(totals.revenue).join(' · ') || '–'}
              </span>
            </div>
          </div>
          {by !== '' && byValue ? (
            <ByValueTable data={byValue} />
          ) : data.links.length === 0 ? (
            <p id="conversions-empty">No leads or sales in this range yet. Turn on conversion tracking on a link and report leads with its click ids.</p>
          ) : (
            <ScrollRegion label="Conversions per link">
              <table id="conversions-table">
                <FunnelHead first="Link" />
                <tbody>
                  {data.links.map((l) => (
                    <tr key={`${l.domain}/${l.code}`} data-code={l.code}>
                      <th scope="row">
                        <a href={analyticsHash({ code: l.code, domain: l.domain, range })}>
                          {l.domain}/{l.code}
                        </a>
                      </th>
                      <FunnelCells row={l} />
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollRegion>
          )}
          {series && <SeriesTable data={series} />}
        </>
      )}
    </section>
  );
}

/** The head of a funnel table: what the rows are, then the steps and their rates. */
function FunnelHead({ first }: { first: string }) {
  return (
    <thead>
      <tr>
        <th scope="col">{first}</th>
        {['Clicks', 'Leads', 'Click → lead', 'Sales', 'Lead → sale', 'Revenue'].map((h) => (
          <th key={h} scope="col" class="num">
            {h}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** A funnel row's steps and rates, in FunnelHead's order. */
function FunnelCells({ row }: { row: Pick<ByValue['items'][number], 'clicks' | 'leads' | 'leadRate' | 'sales' | 'saleRate' | 'revenue'> }) {
  return (
    <>
      <td class="num">{fmt(row.clicks)}</td>
      <td class="num">{fmt(row.leads)}</td>
      <td class="num">{pct(row.leadRate)}</td>
      <td class="num">{fmt(row.sales)}</td>
      <td class="num">{pct(row.saleRate)}</td>
      <td class="num revenue">
        {money(row.revenue).map((m) => (
          <div key={m}>{m}</div>
        ))}
      </td>
    </>
  );
}

/** The funnel per value of a click dimension: which variant (country, device, …) converts, not only which one gets clicks. */
function ByValueTable({ data }: { data: ByValue }) {
  const d = data.dimension as Dimension;
  const label = BREAKDOWNS.find((b) => b.id === d)?.label ?? d;
  if (data.items.length === 0) return <p id="conversions-empty">No clicks or conversions in this range.</p>;
  return (
    <ScrollRegion label={`Conversions per ${label.toLowerCase()}`}>
      <table id="conversions-by-table">
        <FunnelHead first={label} />
        <tbody>
          {data.items.map((i) => (
            <tr key={`${i.country ?? ''}/${i.region ?? ''}/${i.value ?? ''}`} data-value={i.value ?? ''}>
              <th scope="row">{valueLabel(d, i.value) + (i.country ? `, ${i.region ? `${i.region}, ` : ''}${i.country}` : '')}</th>
              <FunnelCells row={i} />
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

/** Clicks, leads, sales and revenue per bucket of the range (those with any), newest first. */
function SeriesTable({ data }: { data: Series }) {
  if (data.series.length === 0) return null;
  const when = (iso: string) =>
    data.granularity === 'day'
      ? new Date(iso).toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric' })
      : new Date(iso).toLocaleString('en-GB', { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' });
  return (
    <>
      <h2 id="conversions-series-title">Per {data.granularity}</h2>
      <ScrollRegion label={`Conversions per ${data.granularity}`}>
        <table id="conversions-series" aria-labelledby="conversions-series-title">
          <thead>
            <tr>
              <th scope="col">{data.granularity === 'day' ? 'Day' : 'From'}</th>
              {['Clicks', 'Leads', 'Sales', 'Revenue'].map((h) => (
                <th key={h} scope="col" class="num">
                  {h}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {[...data.series].reverse().map((p) => (
              <tr key={p.time} data-time={p.time}>
                <th scope="row">{when(p.time)}</th>
                <td class="num">{fmt(p.clicks)}</td>
                <td class="num">{fmt(p.leads)}</td>
                <td class="num">{fmt(p.sales)}</td>
                <td class="num revenue">{money(p.revenue).join(' · ') || '–'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
    </>
  );
}
