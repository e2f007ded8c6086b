import { SlotStore } from '@shortlink/tenants-domain';
import { CacheKeys } from '@shortlink/read-path';
import { RedisClusterStore } from './redis-cluster-store';

/** The time in ms by Redis' own clock, so every instance's leases are measured alike. */
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * One sorted set per key: member = holder, score = when its lease lapses. Lapsed holders are
 * dropped first; a new holder gets in while fewer than `limit` hold a slot. ARGV: holder, limit,
 * leaseMs. Returns 1 when taken (or already held), 0 when full.
 */
const ACQUIRE = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1`;

/** ARGV: holder, leaseMs. The holder's lease runs from now again. */
const RENEW = `${NOW}
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1`;

/** Concurrency slots shared by every instance, on the cache's Redis Cluster connection (one key per slot set). */
export class RedisSlots implements SlotStore {
  constructor(
    private readonly store: RedisClusterStore,
    /** A batch start that waits on Redis is worse than one counted locally: fail fast. */
    private readonly deadlineMs = 250,
  ) {}

  async acquire(key: string, holder: string, limit: number, leaseMs: number): Promise<boolean> {
    return (await this.bounded(this.store.client.eval(ACQUIRE, 1, CacheKeys.slots(key), holder, limit, leaseMs) as Promise<number>)) === 1;
  }

  async renew(key: string, holder: string, leaseMs: number): Promise<void> {
    await this.bounded(this.store.client.eval(RENEW, 1, CacheKeys.slots(key), holder, leaseMs));
  }

  async release(key: string, holder: string): Promise<void> {
    await this.bounded(this.store.client.zrem(CacheKeys.slots(key), holder));
  }

  private async bounded<T>(reply: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = () => new Error(`redis: slots not answered within ${this.deadlineMs} ms`);
    const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(late()), this.deadlineMs)));
    try {
      return await Promise.race([reply, deadline]);
    } finally {
      clearTimeout(timer);
      reply.catch(() => undefined);
    }
  }
}
