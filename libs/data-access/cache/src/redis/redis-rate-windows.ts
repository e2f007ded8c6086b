import { BUCKETS_PER_WINDOW, RateWindowStore, WindowHit } from '@shortlink/tenants-domain';
import { CacheKeys } from '@shortlink/read-path';
import { RedisClusterStore } from './redis-cluster-store';

/**
 * `slideWindow` (tenants domain) in Lua over one hash per key: field = bucket index, value =
 * count. The time is Redis' own, so every instance cuts the same buckets whatever its clock.
 * ARGV: limit, windowMs, cost, buckets per window. Returns {allowed, used, waitMs}.
 */
const SLIDE_WINDOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit, windowMs, cost, per = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local bucketMs = math.max(1, math.floor(windowMs / per))
local current = math.floor(now / bucketMs)
local oldest = current - per + 1
local fields = redis.call('HGETALL', KEYS[1])
local used, live, counts = 0, {}, {}
for i = 1, #fields, 2 do
  local b, c = tonumber(fields[i]), tonumber(fields[i + 1])
  if b < oldest then redis.call('HDEL', KEYS[1], fields[i]) else used = used + c; counts[b] = c; table.insert(live, b) end
end
table.sort(live)
local function leavesAt(b) return (b + per) * bucketMs - now end
if used + cost > limit then
  local freed = 0
  for _, b in ipairs(live) do
    freed = freed + counts[b]
    if used - freed + cost <= limit then return {0, used, leavesAt(b)} end
  end
  return {0, used, windowMs}
end
redis.call('HINCRBY', KEYS[1], current, cost)
redis.call('PEXPIRE', KEYS[1], windowMs + bucketMs)
return {1, used + cost, leavesAt(live[1] or current)}`;

/** The script's command name on the client (ioredis `defineCommand`). */
const COMMAND = 'shortlinkSlideWindow';
type SlideWindowClient = { [COMMAND]: (key: string, limit: number, windowMs: number, cost: number, per: number) => Promise<[number, number, number]> };

/**
 * Plan windows shared by every instance, on the cache's Redis Cluster connection. Every API request
 * takes one (a track call two): the script goes by its SHA (EVALSHA; ioredis sends its ~1 KB body
 * again only when a node answers NOSCRIPT), corked with the other commands of the event-loop turn
 * into one socket write per node (docs/benchmarks.md, "Track endpoints").
 */
export class RedisRateWindows implements RateWindowStore {
  private readonly client: SlideWindowClient;

  constructor(
    private readonly store: RedisClusterStore,
    /** A limiter that waits is worse than one that falls back: fail fast, count locally. */
    private readonly deadlineMs = 250,
  ) {
    if (!(COMMAND in store.client)) store.client.defineCommand(COMMAND, { numberOfKeys: 1, lua: SLIDE_WINDOW });
    this.client = store.client as unknown as SlideWindowClient;
  }

  async hit(key: string, limit: number, windowMs: number, cost: number): Promise<WindowHit> {
    const redisKey = CacheKeys.planWindow(key);
    const reply = this.store.batched(() => this.client[COMMAND](redisKey, limit, windowMs, cost, BUCKETS_PER_WINDOW));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error(`redis: rate window not answered within ${this.deadlineMs} ms`)), this.deadlineMs)),
    );
    try {
      const [allowed, used, waitMs] = await Promise.race([reply, deadline]);
      return { allowed: allowed === 1, used: Number(used), waitMs: Number(waitMs) };
    } finally {
      clearTimeout(timer);
      reply.catch(() => undefined);
    }
  }
}
