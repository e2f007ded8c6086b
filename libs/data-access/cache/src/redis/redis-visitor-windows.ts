import { VisitorWindowCount, VisitorWindowStore } from '@shortlink/links-domain';
import { CacheKeys } from '@shortlink/read-path';
import { RedisClusterStore } from './redis-cluster-store';

/** ARGV: delta, ttl ms. Adds to the window's counter (made with its expiry) and answers the total. */
const ADD = `local n = redis.call('INCRBY', KEYS[1], ARGV[1])
if n == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return n`;

/** A window's counter outlives its window by this much: a merge sent in its last moments still finds it. */
const AFTER_WINDOW_MS = 5000;

type Commands = { shortlinkVisitorAdd(key: string, delta: number, ttlMs: number): Promise<number> };

/**
 * The per-link visitor windows shared by every redirect instance, on the cache's Redis Cluster
 * connection: one counter per (link, address, window), expiring after its window. One merge
 * sends each instance's counts of a sync period together (one script per counter, in one event-loop turn).
 */
export class RedisVisitorWindows implements VisitorWindowStore {
  private readonly commands: Commands;

  constructor(
    store: RedisClusterStore,
    private readonly now: () => number = Date.now,
  ) {
    store.client.defineCommand('shortlinkVisitorAdd', { numberOfKeys: 1, lua: ADD });
    this.commands = store.client as unknown as Commands;
  }

  add(counts: readonly VisitorWindowCount[], windowMs: number): Promise<number[]> {
    const now = this.now();
    return Promise.all(
      counts.map(({ linkId, address, window, delta }) => {
        const ttlMs = (window + 1) * windowMs - now + AFTER_WINDOW_MS;
        if (window < Math.floor(now / windowMs)) return 0;
        return this.commands.shortlinkVisitorAdd(CacheKeys.visitorWindow(linkId, address, window), delta, ttlMs).then(Number);
      }),
    );
  }
}
