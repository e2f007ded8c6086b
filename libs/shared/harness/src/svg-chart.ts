/** One panel: a figure's values, one per x. */
export interface Series {
  readonly title: string;
  readonly values: readonly number[];
}

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const label = (n: number) =>
  Math.abs(n) >= 1e6 ? `${+(n / 1e6).toPrecision(3)}M` : Math.abs(n) >= 1e3 ? `${+(n / 1e3).toPrecision(3)}k` : `${+n.toPrecision(3)}`;

/**
 * Small multiples: one line chart per series against the same x (the number of links, on a log
 * scale when it spans more than a decade), each with its own y axis from 0. Plain SVG, no script,
 * readable in a README on GitHub.
 */
export function lineChartsSvg(title: string, x: readonly number[], series: readonly Series[], columns = 4): string {
  const [w, h, pad] = [260, 170, 42];
  const rows = Math.ceil(series.length / columns);
  const width = columns * w;
  const height = rows * h + 36;
  const logX = x.length > 1 && Math.max(...x) / Math.max(1, Math.min(...x)) > 10;
  const tx = (v: number) => (logX ? Math.log10(Math.max(1, v)) : v);
  const [x0, x1] = [Math.min(...x.map(tx)), Math.max(...x.map(tx))];
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="14" font-weight="bold">${escape(title)}</text>`,
  ];
  series.forEach((s, i) => {
    const [ox, oy] = [(i % columns) * w, 36 + Math.floor(i / columns) * h];
    const [left, right, top, bottom] = [ox + pad, ox + w - 14, oy + 22, oy + h - 30];
    const right0 = right;
    const finite = s.values.filter(Number.isFinite);
    const yMax = Math.max(...finite, 0) * 1.1 || 1;
    const px = (v: number) => (x1 === x0 ? (left + right) / 2 : left + ((tx(v) - x0) / (x1 - x0)) * (right - left));
    const py = (v: number) => bottom - (v / yMax) * (bottom - top);
    out.push(`<text x="${ox + w / 2}" y="${oy + 14}" text-anchor="middle" font-weight="bold">${escape(s.title)}</text>`);
    out.push(
      `<line x1="${left}" y1="${bottom}" x2="${right}" y2="${bottom}" stroke="#888"/><line x1="${left}" y1="${top}" x2="${left}" y2="${bottom}" stroke="#888"/>`,
    );
    for (const f of [0, 0.5, 1]) {
      const v = (yMax / 1.1) * f;
      out.push(`<text x="${left - 4}" y="${py(v) + 4}" text-anchor="end" fill="#555">${label(v)}</text>`);
    }
    x.forEach((v) => out.push(`<text x="${px(v)}" y="${bottom + 14}" text-anchor="middle" fill="#555">${label(v)}</text>`));
    const points = x.map((v, k) => [px(v), py(s.values[k])] as const).filter(([, y]) => Number.isFinite(y));
    if (points.length > 1)
      out.push(`<polyline fill="none" stroke="#2563eb" stroke-width="2" points="${points.map(([a, b]) => `${a.toFixed(1)},${b.toFixed(1)}`).join(' ')}"/>`);
    for (const [a, b] of points) out.push(`<circle cx="${a.toFixed(1)}" cy="${b.toFixed(1)}" r="3" fill="#2563eb"/>`);
    // Labels of points in the right half go to their left, so that none is cut at the panel's edge.
    s.values.forEach((v, k) => {
      if (!Number.isFinite(v)) return;
      const right = px(x[k]) > (left + right0) / 2;
      out.push(`<text x="${px(x[k]) + (right ? -5 : 5)}" y="${py(v) - 6}" text-anchor="${right ? 'end' : 'start'}" fill="#111">${label(v)}</text>`);
    });
  });
  out.push('</svg>');
  return out.join('\n');
}
