import { Cluster, Redis } from 'ioredis';
import { LinkChange, LinkChangeFeed } from '@shortlink/links-domain';
import { CacheKeys } from '@shortlink/read-path';

export interface RedisLinkChangeFeedOptions {
  readonly nodes: ReadonlyArray<{ host: string; port: number }>;
  readonly commandTimeoutMs?: number;
}

/**
 * Link changes over Redis pub/sub. In a cluster a PUBLISH reaches the subscribers of every node, so
 * each redirect instance subscribes on one node of its choice, on a connection of its own (a
 * subscribed connection can do nothing else); when that node stays unreachable it moves to the
 * next. Publishing uses an ordinary cluster connection. Messages sent while the subscription is
 * down are lost: once it is back (subscribed again), the subscriber is told (onGap), so the redirect
 * can drop what it may have missed (docs/design.md, "Edits reach every instance").
 *
 * Not ioredis' cluster subscriber: when its connection is cut it quietly subscribes again
 * elsewhere, and nothing tells the caller that messages were lost in between.
 */
export class RedisLinkChangeFeed implements LinkChangeFeed {
  private publisher: Cluster | null = null;
  private readonly subscriptions = new Set<() => void>();

  constructor(private readonly options: RedisLinkChangeFeedOptions) {}

  async publish(change: LinkChange): Promise<void> {
    this.publisher ??= this.client();
    await this.publisher.publish(CacheKeys.linkChanges, `${change.version}\u0000${change.domain}\u0000${change.code}`);
  }

  async subscribe(onChange: (change: LinkChange) => void, onGap: () => void): Promise<() => Promise<void>> {
    const nodes = this.options.nodes;
    let next = Math.floor(Math.random() * nodes.length);
    let active = true;
    let interrupted = false;
    let current: Redis;
    let subscribed!: () => void;
    const first = new Promise<void>((resolve) => (subscribed = resolve));
    const onMessage = (channel: string, message: string) => {
      if (!active || channel !== CacheKeys.linkChanges) return;
      const [version, domain, code] = message.split('\u0000');
      // An empty code is a change of the domain's settings (domainSettingsChange).
      if (domain && code !== undefined && /^\d+$/.test(version)) onChange({ domain, code, version: Number(version) });
    };
    const connect = (): Redis => {
      const node = nodes[next++ % nodes.length];
      const r = new Redis({
        host: node.host,
        port: node.port,
        // Named, so an operator (or a failure test) can find this process's subscription in CLIENT LIST.
        connectionName: `shortlink-link-changes-${process.pid}`,
        connectTimeout: 2000,
        enableOfflineQueue: true,
        // A few quick retries on the same node, then 'end': the next node is tried.
        retryStrategy: (times) => (times > 3 ? null : Math.min(200 * times, 1000)),
      });
      r.on('error', () => undefined);
      r.on('message', onMessage);
      r.on('close', () => (interrupted = true));
      r.on('ready', () => {
        // SUBSCRIBE on every (re)connection; once the server has it, nothing more can be missed, and
        // what was missed before is reported.
        r.subscribe(CacheKeys.linkChanges).then(
          () => {
            subscribed();
            if (active && interrupted) {
              interrupted = false;
              onGap();
            }
          },
          () => undefined,
        );
      });
      r.on('end', () => {
        if (active) current = connect();
      });
      return r;
    };
    current = connect();
    const stop = () => {
      active = false;
      current.disconnect();
    };
    this.subscriptions.add(stop);
    await first;
    return async () => {
      this.subscriptions.delete(stop);
      stop();
    };
  }

  async close(): Promise<void> {
    for (const stop of [...this.subscriptions]) stop();
    this.subscriptions.clear();
    this.publisher?.disconnect();
    this.publisher = null;
  }

  private client(): Cluster {
    const cluster = new Cluster([...this.options.nodes], {
      enableOfflineQueue: true,
      clusterRetryStrategy: (times) => Math.min(100 * times, 2000),
      redisOptions: { commandTimeout: this.options.commandTimeoutMs ?? 500, maxRetriesPerRequest: 1, connectTimeout: 2000 },
    });
    cluster.on('error', () => undefined);
    return cluster;
  }
}
