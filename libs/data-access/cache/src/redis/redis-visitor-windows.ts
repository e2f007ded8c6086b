import { VisitorWindowHit, VisitorWindowStore } from '@shortlink/links-domain';
import { CacheKeys } from '@shortlink/read-path';
import { RedisClusterStore } from './redis-cluster-store';

/**
 * `visitorWindowHit` (links domain) in Lua over one counter per (link, address), which expires when
 * its window ends. The time is Redis' own, so every instance cuts the same windows whatever its
 * clock. ARGV: limit, windowMs, counts (1 or 0). Returns {allowed, count, waitMs}.
 */
const FIXED_WINDOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit, windowMs = tonumber(ARGV[1]), tonumber(ARGV[2])
local waitMs = (math.floor(now / windowMs) + 1) * windowMs - now
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= limit then return {0, n, waitMs} end
if ARGV[3] == '1' then
  n = redis.call('INCR', KEYS[1])
  if n == 1 then redis.call('PEXPIRE', KEYS[1], waitMs) end
end
return {1, n, waitMs}`;

/** The per-link visitor windows shared by every redirect instance, on the cache's Redis Cluster connection. */
export class RedisVisitorWindows implements VisitorWindowStore {
  constructor(
    private readonly store: RedisClusterStore,
    /** A limiter that waits is worse than one that falls back: fail fast, the instance's own window decides. */
    private readonly deadlineMs = 250,
  ) {}

  async hit(linkId: string, address: string, limit: number, windowMs: number, counts: boolean): Promise<VisitorWindowHit> {
    const key = CacheKeys.visitorWindow(linkId, address);
    const reply = this.store.client.eval(FIXED_WINDOW, 1, key, limit, windowMs, counts ? 1 : 0) as Promise<[number, number, number]>;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error(`redis: visitor window not answered within ${this.deadlineMs} ms`)), this.deadlineMs)),
    );
    try {
      const [allowed, count, waitMs] = await Promise.race([reply, deadline]);
      return { allowed: allowed === 1, count: Number(count), waitMs: Number(waitMs) };
    } finally {
      clearTimeout(timer);
      reply.catch(() => undefined);
    }
  }
}
