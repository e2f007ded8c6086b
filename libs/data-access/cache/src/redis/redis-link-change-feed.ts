import { Cluster } from 'ioredis';
import { LinkChange, LinkChangeFeed } from '@shortlink/links-domain';

export const LINK_CHANGE_CHANNEL = 'shortlink:link-changes';

export interface RedisLinkChangeFeedOptions {
  readonly nodes: ReadonlyArray<{ host: string; port: number }>;
  readonly commandTimeoutMs?: number;
}

/**
 * Link changes over Redis pub/sub. In a cluster a PUBLISH reaches the subscribers of every node,
 * so each redirect instance subscribes on one connection of its own (a subscribed connection can
 * do nothing else). Publishing uses a second, ordinary connection. When the subscription drops,
 * messages are lost until it is back: the subscriber is told (onGap) when it is ready again, so
 * the redirect can drop what it may have missed (docs/design.md, "Edits reach every instance").
 */
export class RedisLinkChangeFeed implements LinkChangeFeed {
  private publisher: Cluster | null = null;
  private readonly subscribers: Cluster[] = [];

  constructor(private readonly options: RedisLinkChangeFeedOptions) {}

  async publish(change: LinkChange): Promise<void> {
    this.publisher ??= this.client();
    await this.publisher.publish(LINK_CHANGE_CHANNEL, `${change.version}\u0000${change.domain}\u0000${change.code}`);
  }

  async subscribe(onChange: (change: LinkChange) => void, onGap: () => void): Promise<() => Promise<void>> {
    const subscriber = this.client();
    this.subscribers.push(subscriber);
    let interrupted = false;
    let active = true;
    subscriber.on('message', (channel: string, message: string) => {
      if (!active || channel !== LINK_CHANGE_CHANNEL) return;
      const [version, domain, code] = message.split('\u0000');
      if (domain && code && /^\d+$/.test(version)) onChange({ domain, code, version: Number(version) });
    });
    subscriber.on('close', () => (interrupted = true));
    subscriber.on('ready', () => {
      if (interrupted) {
        interrupted = false;
        onGap();
      }
    });
    await subscriber.subscribe(LINK_CHANGE_CHANNEL);
    return async () => {
      active = false; // messages already read from the socket must not reach the handler any more
      this.subscribers.splice(this.subscribers.indexOf(subscriber), 1);
      subscriber.disconnect();
    };
  }

  async close(): Promise<void> {
    for (const s of this.subscribers.splice(0)) s.disconnect();
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
