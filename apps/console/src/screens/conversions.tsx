/**
 * Conversions in the console (docs/console.md, "Conversions"): per link, the funnel clicks → leads →
 * sales, the revenue per currency and the conversion rates over a range, from the analytics app's
 * `GET /api/v1/stats/conversions` through the generation app's relay. Its own chunk, loaded when opened.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { type AnalyticsSchemas, analyticsApi } from '../api/analytics-client';
import { type Problem, problemOf } from '../api/client';
import { RANGES, type RangeId, rangeParams } from '../analytics/series';
import { go, ProblemNote, ScrollRegion, useRoute } from '../ui';
import { analyticsHash } from './analytics';
import '../analytics/analytics.css';

type Funnel = AnalyticsSchemas['ConversionFunnel'];

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
  const range = (RANGES.some((r) => r.id === query.get('range')) ? query.get('range') : '30d') as RangeId;
  const [data, setData] = useState<Funnel | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(true);
  const seq = useRef(0);

  useEffect(() => {
    const mine = ++seq.current;
    setBusy(true);
    const r = rangeParams(range === 'custom' ? '30d' : range, { from: '', to: '' }, Date.now());
    analyticsApi
      .GET('/api/v1/stats/conversions', { params: { query: { from: r.from, to: r.to, granularity: r.granularity, limit: 100 } } })
      .then(({ data: d, error, response }) => {
        if (mine !== seq.current) return;
        if (!d || typeof d === 'string') {
          setProblem(problemOf(error, response));
          setData(null);
        } else {
          setProblem(null);
          setData(d);
        }
      })
      .catch((e: unknown) => mine === seq.current && setProblem(problemOf(e)))
      .finally(() => mine === seq.current && setBusy(false));
  }, [range]);

  return (
    <section aria-labelledby="conversions-title" id="conversions" aria-busy={busy ? 'true' : 'false'}>
      <h1 id="conversions-title">Conversions</h1>
      <p class="hint">
        Clicks of your links with conversion tracking, the leads and sales your backend (or Stripe) reported for them, and the revenue, per link.
      </p>
      <label for="conversions-range">Range</label>{' '}
      <select id="conversions-range" value={range} onChange={(e) => go(`#/conversions?range=${(e.target as HTMLSelectElement).value}`)}>
        {RANGES.filter((r) => r.id !== 'custom').map((r) => (
          <option key={r.id} value={r.id}>
            {r.label}
          </option>
        ))}
      </select>
      <ProblemNote problem={problem} />
      {data && (
        <>
          <div class="funnel" id="funnel-totals" aria-label="All links">
            <Step label="Clicks" value={data.totals.clicks} />
            <Step label="Leads" value={data.totals.leads} rate={data.totals.leadRate} />
            <Step label="Sales" value={data.totals.sales} rate={data.totals.saleRate} />
            <div class="funnel-step">
              <span class="funnel-label">Revenue</span>
              <span class="funnel-value" id="funnel-revenue">
                {money(data.totals.revenue).join(' · ') || '–'}
              </span>
            </div>
          </div>
          {data.links.length === 0 ? (
            <p id="conversions-empty">No leads or sales in this range yet. Turn on conversion tracking on a link and report leads with its click ids.</p>
          ) : (
            <ScrollRegion label="Conversions per link">
              <table id="conversions-table">
                <thead>
                  <tr>
                    <th scope="col">Link</th>
                    <th scope="col" class="num">
                      Clicks
                    </th>
                    <th scope="col" class="num">
                      Leads
                    </th>
                    <th scope="col" class="num">
                      Click → lead
                    </th>
                    <th scope="col" class="num">
                      Sales
                    </th>
                    <th scope="col" class="num">
                      Lead → sale
                    </th>
                    <th scope="col" class="num">
                      Revenue
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.links.map((l) => (
                    <tr key={`${l.domain}/${l.code}`} data-code={l.code}>
                      <th scope="row">
                        <a href={analyticsHash({ code: l.code, domain: l.domain, range: range === 'custom' ? '30d' : range })}>
                          {l.domain}/{l.code}
                        </a>
                      </th>
                      <td class="num">{fmt(l.clicks)}</td>
                      <td class="num">{fmt(l.leads)}</td>
                      <td class="num">{pct(l.leadRate)}</td>
                      <td class="num">{fmt(l.sales)}</td>
                      <td class="num">{pct(l.saleRate)}</td>
                      <td class="num revenue">
                        {money(l.revenue).map((m) => (
                          <div key={m}>{m}</div>
                        ))}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollRegion>
          )}
        </>
      )}
    </section>
  );
}
