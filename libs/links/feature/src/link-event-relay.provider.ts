import { Provider } from '@nestjs/common';
import { Counter, Gauge, Registry } from 'prom-client';
import type { AppConfig } from '@shortlink/config';
import {
  CacheEventConsumer,
  CHANGE_HEARTBEAT_MS,
  LINK_CACHE_WRITER,
  LINK_CHANGE_FEED,
  LINK_EVENT_OUTBOXES,
  LINK_REPOSITORY,
  LinkCacheWriter,
  LinkChangeFeed,
  LinkEventOutboxes,
  LinkEventRelay,
  LinkRepository,
  RelayCounts,
} from '@shortlink/links-domain';
import { AdminRoutes, APP_LOGGER, Lifecycle, METRICS_REGISTRY, PinoNestLogger } from '@shortlink/nest-platform';

/**
 * The generation app's outbox relay (docs/design.md, "Edits reach every instance"): its consumer
 * is the caches (Redis and, through the change channel, every redirect's L1); it starts with the
 * app, says it is alive on the channel every second, and stops handing its leases back. Operators
 * see it at /internal/outbox and in the `shortlink_outbox_*` series.
 */
export function linkEventRelayProvider(config: AppConfig): Provider {
  return {
    provide: LinkEventRelay,
    inject: [LINK_EVENT_OUTBOXES, LINK_CACHE_WRITER, LINK_CHANGE_FEED, LINK_REPOSITORY, Lifecycle, APP_LOGGER, METRICS_REGISTRY, AdminRoutes],
    useFactory: (
      outboxes: LinkEventOutboxes,
      cache: LinkCacheWriter,
      feed: LinkChangeFeed,
      repository: LinkRepository,
      lifecycle: Lifecycle,
      appLogger: PinoNestLogger,
      registry: Registry,
      admin: AdminRoutes,
    ) => {
      const logger = appLogger.scoped('Outbox');
      const warned = new Map<string, number>();
      const relay = new LinkEventRelay(outboxes, [new CacheEventConsumer(cache, feed, repository)], {
        ...config.links.outbox,
        // Once a minute per shard at most: a shard that is down fails every round.
        onShardError: (shard, error) => {
          if (Date.now() - (warned.get(shard) ?? 0) < 60_000) return;
          warned.set(shard, Date.now());
          logger.warn(`outbox of shard ${shard}: ${(error as Error)?.message}; tried again every round`);
        },
      });
      let heartbeat: NodeJS.Timeout | null = null;
      lifecycle.manage({
        start: () => {
          relay.start();
          heartbeat = setInterval(() => void feed.heartbeat().catch(() => undefined), CHANGE_HEARTBEAT_MS);
          heartbeat.unref();
        },
        stop: async () => {
          if (heartbeat) clearInterval(heartbeat);
          await relay.stop();
        },
      });
      admin.add('/internal/outbox', async () => {
        const shards = await Promise.all(
          outboxes.all().map(async (o) => {
            const b = await o.backlog().catch((e: Error) => ({ error: e.message }));
            return { shard: o.shardName, ...('error' in b ? b : { events: b.events, oldest: b.oldest?.toISOString() ?? null }) };
          }),
        );
        return { body: { owner: relay.owner, held: relay.pending(), counts: relay.counts, shards } };
      });
      registerMetrics(registry, relay);
      return relay;
    },
  };
}

function registerMetrics(registry: Registry, relay: LinkEventRelay): void {
  const registers = [registry];
  new Gauge({
    name: 'shortlink_outbox_held_events',
    help: 'Link events this instance’s relay holds: read from the outboxes, not yet delivered everywhere',
    registers,
    collect() {
      this.set(relay.pending().events);
    },
  });
  new Gauge({
    name: 'shortlink_outbox_oldest_held_seconds',
    help: 'Age of the oldest link event this instance’s relay holds',
    registers,
    collect() {
      this.set(relay.pending().oldestMs / 1000);
    },
  });
  const counted: Array<[keyof RelayCounts, string]> = [
    ['delivered', 'Link events delivered to the caches (by a request or by the relay)'],
    ['failed', 'Deliveries of link events that failed and wait for the next round'],
    ['redelivered', 'Link events found not to have held in the shared cache when read back, and delivered again'],
    ['settled', 'Link events deleted from the outboxes once delivered'],
    ['claimed', 'Link events of another relay taken over after their lease ran out'],
  ];
  for (const [key, help] of counted) {
    new Counter({
      name: `shortlink_outbox_${key}_total`,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(relay.counts[key]);
      },
    });
  }
}
