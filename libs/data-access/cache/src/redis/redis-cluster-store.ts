import { Cluster } from 'ioredis';
import { CacheStore } from '@shortlink/links-domain';

export interface RedisClusterOptions {
  readonly nodes: ReadonlyArray<{ host: string; port: number }>;
  /** Per-command timeout, so a dead node fails a lookup fast instead of hanging the redirect. */
  readonly commandTimeoutMs?: number;
}

/** Redis Cluster through ioredis: string values (seed 000), reads may go to replicas. */
export class RedisClusterStore implements CacheStore {
  readonly client: Cluster;

  constructor(options: RedisClusterOptions) {
    this.client = new Cluster([...options.nodes], {
      scaleReads: 'master',
      enableOfflineQueue: true,
      maxRedirections: 8,
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 200,
      slotsRefreshTimeout: 2000,
      clusterRetryStrategy: (times) => Math.min(100 * times, 2000),
      redisOptions: {
        commandTimeout: options.commandTimeoutMs ?? 500,
        maxRetriesPerRequest: 1,
        connectTimeout: 2000,
        enableAutoPipelining: false,
      },
      lazyConnect: false,
    });
    // Errors surface per command; the connection-level event only needs a listener so that
    // ioredis does not print "Unhandled error event".
    this.client.on('error', () => undefined);
  }

  async get(key: string): Promise<string | null> {
    return this.client.get(key);
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    if (ttlMs) await this.client.set(key, value, 'PX', ttlMs);
    else await this.client.set(key, value);
  }

  /** One DEL per key: keys of different slots cannot share a command in a cluster. */
  async del(keys: readonly string[]): Promise<void> {
    await Promise.all(keys.map((k) => this.client.del(k)));
  }

  async ping(): Promise<void> {
    await Promise.all(this.client.nodes('master').map((n) => n.ping()));
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
