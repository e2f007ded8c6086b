/** Prometheus text exposition, read from an app's admin listener. */

export type Metrics = Map<string, number>;

/** Prometheus text → "name{labels}" → value (labels as printed, `app` label dropped). */
export function parseMetrics(text: string): Metrics {
  const m: Metrics = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels = (match[2] ?? '')
      .replace(/,?app="[^"]*"/, '')
      .replace(/^\{,/, '{')
      .replace(/^\{\}$/, '');
    m.set(`${match[1]}${labels}`, Number(match[3]));
  }
  return m;
}

/** `GET <adminBaseUrl>/metrics`, parsed. */
export async function metricsOf(adminBaseUrl: string): Promise<Metrics> {
  const res = await fetch(`${adminBaseUrl}/metrics`, { signal: AbortSignal.timeout(5000) });
  if (res.status !== 200) throw new Error(`GET ${adminBaseUrl}/metrics: ${res.status}`);
  return parseMetrics(await res.text());
}

/** A counter or gauge (0 when the series does not exist yet). */
export const metric = (m: Metrics, series: string) => m.get(series) ?? 0;

/** Every series of `name`, summed per value of `label` (e.g. lookups per `source`). */
export function byLabel(m: Metrics, name: string, label: string): Map<string, number> {
  const out = new Map<string, number>();
  const value = new RegExp(`[{,]${label}="([^"]*)"`);
  for (const [series, v] of m) {
    if (!series.startsWith(`${name}{`)) continue;
    const key = value.exec(series)?.[1];
    if (key !== undefined && Number.isFinite(v)) out.set(key, (out.get(key) ?? 0) + v);
  }
  return out;
}

/** Sum of every series of `name`, whatever its labels. */
export const total = (m: Metrics, name: string) => [...m].filter(([k]) => k === name || k.startsWith(`${name}{`)).reduce((s, [, v]) => s + v, 0);
