import { randomUUID } from 'crypto';
import { Cluster, Redis } from 'ioredis';
import { CHANGE_HEARTBEAT_MS, LinkChange, LinkChangeFeed } from '@shortlink/links-domain';
import { CacheKeys } from '@shortlink/read-path';
import { ChannelWatch } from './channel-watch';
import { SLOTS_REFRESH_MS } from './redis-cluster-store';

export interface RedisLinkChangeFeedOptions {
  readonly nodes: ReadonlyArray<{ host: string; port: number }>;
  readonly commandTimeoutMs?: number;
  /** No message of any publisher for this long makes a subscriber subscribe again elsewhere (default 3.5 heartbeats). */
  readonly silenceMs?: number;
  /** How long a missing message of a publisher may still arrive before it counts as missed (default one heartbeat). */
  readonly reorderMs?: number;
  /** The channel (CacheKeys.linkChanges; another only in tests that must not hear the apps of a shared stack). */
  readonly channel?: string;
}

/** `<version>\0<domain>\0<code>\0<publisher>\0<number>`; a heartbeat has `hb` for the version and no domain or code. */
const HEARTBEAT = 'hb';

/**
 * Link changes over Redis pub/sub. In a cluster a PUBLISH reaches the subscribers of every node, so
 * each redirect instance subscribes on one node of its choice, on a connection of its own (a
 * subscribed connection can do nothing else); when that node stays unreachable it moves to the
 * next. Publishing uses an ordinary cluster connection. Messages sent while the subscription is
 * down are lost: once it is back (subscribed again), the subscriber is told (onGap), so the redirect
 * can drop what it may have missed (docs/design.md, "Edits reach every instance").
 *
 * A cluster can also lose messages without closing anything: a node that hangs (paused, cut off)
 * for half its node timeout loses its cluster-bus links, and the messages published meanwhile on
 * other nodes never reach its subscribers, whose connection stays open. So each publisher numbers
 * its messages and sends a heartbeat every second (`heartbeat`, CHANGE_HEARTBEAT_MS): a subscriber
 * that misses a number reports a gap, and one that hears no publisher at all for `silenceMs`
 * subscribes again on the next node, which reports the gap once subscribed (ChannelWatch).
 *
 * Not ioredis' cluster subscriber: when its connection is cut it quietly subscribes again
 * elsewhere, and nothing tells the caller that messages were lost in between.
 */
export class RedisLinkChangeFeed implements LinkChangeFeed {
  private publisher: Cluster | null = null;
  private readonly subscriptions = new Set<() => void>();
  /** This feed's name as a publisher, and the number of its last message. */
  private readonly publisherId = `${process.pid}-${randomUUID().slice(0, 8)}`;
  private sent = 0;
  private readonly channel: string;

  constructor(private readonly options: RedisLinkChangeFeedOptions) {
    this.channel = options.channel ?? CacheKeys.linkChanges;
  }

  async publish(change: LinkChange): Promise<void> {
    await this.send(`${change.version}\u0000${change.domain}\u0000${change.code}`);
  }

  async heartbeat(): Promise<void> {
    await this.send(`${HEARTBEAT}\u0000\u0000`);
  }

  private async send(body: string): Promise<void> {
    this.publisher ??= this.client();
    // Numbered when sent: one that fails may still arrive later (a paused node runs it when it wakes), or never.
    await this.publisher.publish(this.channel, `${body}\u0000${this.publisherId}\u0000${++this.sent}`);
  }

  async subscribe(onChange: (change: LinkChange) => void, onGap: () => void): Promise<() => Promise<void>> {
    const nodes = this.options.nodes;
    let next = Math.floor(Math.random() * nodes.length);
    let active = true;
    let interrupted = false;
    let current: Redis;
    let subscribed!: () => void;
    const first = new Promise<void>((resolve) => (subscribed = resolve));
    const watch = new ChannelWatch({
      silenceMs: this.options.silenceMs ?? 3.5 * CHANGE_HEARTBEAT_MS,
      reorderMs: this.options.reorderMs ?? CHANGE_HEARTBEAT_MS,
    });
    const onMessage = (channel: string, message: string) => {
      if (!active || channel !== this.channel) return;
      const [version, domain, code, publisher, seq] = message.split('\u0000');
      // Messages of a publisher of before the numbering have neither (they are applied, not counted).
      if (publisher && /^\d+$/.test(seq ?? '')) watch.heard(publisher, Number(seq), Date.now());
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
        r.subscribe(this.channel).then(
          () => {
            watch.reset(Date.now());
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
    const checks = setInterval(() => {
      if (!active || current.status !== 'ready') return;
      const state = watch.check(Date.now());
      if (state === 'gap') onGap();
      else if (state === 'silent') {
        // Heard nobody for a silence: the node may hang with the connection open. The next node; the gap is reported once subscribed there.
        interrupted = true;
        current.disconnect();
      }
    }, CHANGE_HEARTBEAT_MS / 4);
    checks.unref();
    const stop = () => {
      active = false;
      clearInterval(checks);
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
      slotsRefreshInterval: SLOTS_REFRESH_MS,
      clusterRetryStrategy: (times) => Math.min(100 * times, 2000),
      redisOptions: { commandTimeout: this.options.commandTimeoutMs ?? 500, maxRetriesPerRequest: 1, connectTimeout: 2000 },
    });
    cluster.on('error', () => undefined);
    return cluster;
  }
}
