import { randomInt } from 'crypto';
import { keepAliveAgent, metric, metricsOf, pooled, send } from '@shortlink/harness';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** The share of unknown codes a scan right after a start may send to the shards: twice the filter's 1 % (a 1-in-10⁴ draw aside). */
export const BOOT_SCAN_STORE_SHARE = 0.02;

/**
 * `probes` random codes that no link has, sent to a redirect right after it answered /health (a
 * scanner after a deploy or restart), 16 at a time: their answers, and how many of them a shard
 * answered (`shortlink_redirect_lookup_total` of the sources `db` and `db_miss` on the redirect's
 * admin listener: lookups, so the instance's own shard reads on a shared stack, such as reloads of
 * links other runs change, are not counted). The Bloom filter must answer before the listener
 * opens (docs/design.md, "Redirect read path").
 */
export async function scanRightAfterStart(
  redirect: string,
  admin: string,
  probes = 3000,
): Promise<{ statuses: number[]; otherThan404: string[]; reachedStore: number; ms: number }> {
  const codes = new Set<string>();
  while (codes.size < probes) codes.add(`zq${Array.from({ length: 7 }, () => ALPHABET[randomInt(62)]).join('')}`);
  const list = [...codes];
  const agent = keepAliveAgent();
  const started = Date.now();
  try {
    const fromShards = async () => {
      const m = await metricsOf(admin);
      return metric(m, 'shortlink_redirect_lookup_total{source="db"}') + metric(m, 'shortlink_redirect_lookup_total{source="db_miss"}');
    };
    const before = await fromShards();
    const replies = await pooled(list.length, 16, (i) => send(agent, redirect, `/${list[i]}`, 'GET', 10_000), 120_000);
    const after = await fromShards();
    // An answer other than 404, with its problem code when it has one (a 503 says why: OVERLOADED, SHARD_UNAVAILABLE…).
    const codeOf = (body: string) => {
      try {
        return (JSON.parse(body) as { code?: string }).code ?? '';
      } catch {
        return '';
      }
    };
    const otherThan404 = replies.filter((r) => r.status !== 404).map((r) => `${r.status} ${codeOf(r.body)}`.trim());
    return { statuses: replies.map((r) => r.status), otherThan404, reachedStore: after - before, ms: Date.now() - started };
  } finally {
    agent.destroy();
  }
}
