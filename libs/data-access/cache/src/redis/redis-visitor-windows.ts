import { CacheKeys } from '@shortlink/read-path';
import { RedisClusterStore } from './redis-cluster-store';
import { VisitorWindowCount, VisitorWindowStore } from '@shortlink/redirect-rules';

/** ARGV: delta, ttl ms. Adds to the window's counter (made with its expiry) and answers the total. */
const ADD = `local n = redis.call('INCRBY', KEYS[1], ARGV[1])
if n == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return n`;

/** ADD over every counter of one node: ARGV is (key, delta, ttl ms) per counter; answers the totals in order. */
const ADD_ON_NODE = `local out = {}
for i = 1, #ARGV, 3 do
  local n = redis.call('INCRBY', ARGV[i], ARGV[i + 1])
  if n == tonumber(ARGV[i + 1]) then redis.call('PEXPIRE', ARGV[i], ARGV[i + 2]) end
  out[#out + 1] = n
end
return out`;

/** A window's counter outlives its window by this much: a merge sent in its last moments still finds it. */
const AFTER_WINDOW_MS = 5000;

type Commands = { shortlinkVisitorAdd(key: string, delta: number, ttlMs: number): Promise<number> };

/**
 * The per-link visitor windows shared by every redirect instance, on the cache's Redis Cluster
 * connection: one counter per (link, address, window), expiring after its window. One merge sends
 * an instance's counts of a sync period as one script per master node, whatever the visitors (a
 * thousand busy visitors were a thousand commands every 100 ms, one per counter).
 */
export class RedisVisitorWindows implements VisitorWindowStore {
  private readonly commands: Commands;

  constructor(
    private readonly store: RedisClusterStore,
    private readonly now: () => number = Date.now,
  ) {
    store.client.defineCommand('shortlinkVisitorAdd', { numberOfKeys: 1, lua: ADD });
    this.commands = store.client as unknown as Commands;
  }

  async add(counts: readonly VisitorWindowCount[], windowMs: number): Promise<number[]> {
    const now = this.now();
    const current = Math.floor(now / windowMs);
    const live: Array<[string, number, number]> = [];
    const at: number[] = [];
    counts.forEach(({ linkId, address, window, delta }, i) => {
      if (window < current) return; // over: neither counted nor read
      live.push([CacheKeys.visitorWindow(linkId, address, window), delta, (window + 1) * windowMs - now + AFTER_WINDOW_MS]);
      at.push(i);
    });
    const totals = await this.store.perNode(ADD_ON_NODE, live, ([key, delta, ttlMs]) => this.commands.shortlinkVisitorAdd(key, Number(delta), Number(ttlMs)));
    const out = new Array<number>(counts.length).fill(0);
    at.forEach((i, k) => (out[i] = Number(totals[k])));
    return out;
  }
}
