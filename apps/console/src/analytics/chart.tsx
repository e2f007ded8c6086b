/**
 * The clicks chart, drawn by our own code as SVG (no chart library, nothing inline that the CSP
 * would refuse: presentation attributes only). One bar per bucket of the range; each bar names its
 * time and count in a <title> (a tooltip, and what a screen reader reads), the figure's label says
 * the bucket size, the total and the peak.
 */
import { type Bucket, peakOf, sizeInWords } from './series';

const W = 720;
const H = 220;
const LEFT = 48;
const RIGHT = 8;
const TOP = 10;
const BOTTOM = 26;

/** A round maximum for the axis (1, 2, 5 × 10^n) at or above `n`. */
export function niceMax(n: number): number {
  if (n <= 5) return 5;
  const p = 10 ** Math.floor(Math.log10(n));
  return ([1, 2, 5, 10].map((m) => m * p).find((m) => m >= n) ?? 10 * p) as number;
}

const fmt = (n: number) => n.toLocaleString('en-US');

function timeLabel(seconds: number, size: number, span: number): string {
  const d = new Date(seconds * 1000);
  if (size >= 86_400) return d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
  const time = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  return span > 86_400 ? `${d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })} ${time}` : time;
}

export function ClicksChart({ buckets, size, id = 'clicks-chart' }: { buckets: readonly Bucket[]; size: number; id?: string }) {
  if (buckets.length === 0) return null;
  const max = niceMax(Math.max(...buckets.map((b) => b.clicks)));
  const span = buckets[buckets.length - 1].end - buckets[0].start;
  const plotW = W - LEFT - RIGHT;
  const plotH = H - TOP - BOTTOM;
  const barW = plotW / buckets.length;
  const y = (n: number) => TOP + plotH - (n / max) * plotH;
  const total = buckets.reduce((n, b) => n + b.clicks, 0);
  const peak = peakOf(buckets);
  const label =
    `Clicks per ${sizeInWords(size)}: ${fmt(total)} in all` +
    (peak ? `, most (${fmt(peak.clicks)}) at ${timeLabel(peak.start, size, span)}` : ', none in this range');
  const ticks = Math.min(6, buckets.length);
  const every = Math.ceil(buckets.length / ticks);
  return (
    <figure class="chart">
      <svg id={id} viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label} data-bucket-seconds={size} data-buckets={buckets.length}>
        {[0, max / 2, max].map((v) => (
          <g key={v}>
            <line x1={LEFT} x2={W - RIGHT} y1={y(v)} y2={y(v)} stroke="#d0d7de" stroke-width="1" />
            <text x={LEFT - 6} y={y(v) + 4} text-anchor="end" font-size="11" fill="#57606a">
              {fmt(v)}
            </text>
          </g>
        ))}
        {buckets.map((b, i) =>
          b.clicks > 0 ? (
            <rect
              key={b.start}
              class="bar"
              x={LEFT + i * barW + barW * 0.1}
              y={y(b.clicks)}
              width={Math.max(1, barW * 0.8)}
              height={Math.max(1, TOP + plotH - y(b.clicks))}
              fill="#0b57d0"
              data-start={new Date(b.start * 1000).toISOString()}
              data-clicks={b.clicks}
            >
              <title>{`${timeLabel(b.start, size, span)}: ${fmt(b.clicks)} click${b.clicks === 1 ? '' : 's'}`}</title>
            </rect>
          ) : null,
        )}
        {buckets.map((b, i) =>
          i % every === 0 ? (
            <text key={`t${b.start}`} x={LEFT + i * barW} y={H - 8} font-size="11" fill="#57606a">
              {timeLabel(b.start, size, span)}
            </text>
          ) : null,
        )}
      </svg>
      <figcaption class="sub">
        {label}. Bars of {sizeInWords(size)}.
      </figcaption>
    </figure>
  );
}

/** A breakdown's share as a small bar (SVG, so no inline style), next to the numbers. */
export function ShareBar({ share }: { share: number }) {
  return (
    <svg class="share" viewBox="0 0 100 10" width="100" height="10" aria-hidden="true" preserveAspectRatio="none">
      <rect x="0" y="0" width="100" height="10" fill="#eaeef2" />
      <rect x="0" y="0" width={Math.max(0, Math.min(100, share * 100))} height="10" fill="#0b57d0" />
    </svg>
  );
}
