import { randomInt } from 'crypto';
import { keepAliveAgent, metric, metricsOf, pooled, send } from '@shortlink/harness';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** The share of unknown codes a scan right after a start may send to the shards: twice the filter's 1 % (a 1-in-10⁴ draw aside). */
export const BOOT_SCAN_STORE_SHARE = 0.02;

/**
 * `probes` random codes that no link has, sent to a redirect right after it answered /health (a
 * scanner after a deploy or restart), 16 at a time: their answers, and how many reached a shard
 * (`shortlink_redirect_db_queries_total` on the redirect's admin listener, which counts only the
 * queries sent to a shard). The Bloom filter must answer before the listener opens
 * (docs/design.md, "Redirect read path").
 */
export async function scanRightAfterStart(redirect: string, admin: string, probes = 3000): Promise<{ statuses: number[]; reachedStore: number; ms: number }> {
  const codes = new Set<string>();
  while (codes.size < probes) codes.add(`zq${Array.from({ length: 7 }, () => ALPHABET[randomInt(62)]).join('')}`);
  const list = [...codes];
  const agent = keepAliveAgent();
  const started = Date.now();
  try {
    const before = metric(await metricsOf(admin), 'shortlink_redirect_db_queries_total');
    const replies = await pooled(list.length, 16, (i) => send(agent, redirect, `/${list[i]}`, 'GET', 10_000), 120_000);
    const after = metric(await metricsOf(admin), 'shortlink_redirect_db_queries_total');
    return { statuses: replies.map((r) => r.status), reachedStore: after - before, ms: Date.now() - started };
  } finally {
    agent.destroy();
  }
}
