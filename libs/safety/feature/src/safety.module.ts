import { randomUUID } from 'crypto';
import { DynamicModule, Inject, Injectable, Module } from '@nestjs/common';
import { Registry } from 'prom-client';
import { AuditContext, AuditLog } from '@shortlink/audit-domain';
import type { AppConfig } from '@shortlink/config';
import {
  CODE_SECRET,
  LINK_CHANGE_FEED,
  LINK_COMMANDS,
  LINK_OBSERVER,
  LINK_REPOSITORY,
  LinkChangeFeed,
  LinkCommands,
  LinkRepository,
  LinkService,
  ListCursors,
  TARGET_REPUTATION,
  URL_POLICY,
} from '@shortlink/links-domain';
import { APP_LOGGER, Lifecycle, METRICS_REGISTRY, PinoNestLogger, talliedCounter } from '@shortlink/nest-platform';
import {
  BrokenLinkSettingsService,
  FEED_READER,
  FeedReader,
  FeedSet,
  FeedWatcher,
  LiveRecheck,
  REMOTE_REPUTATION,
  RemoteReputation,
  ReportRelay,
  ReputationService,
  SAFETY_STORE,
  SafetyStore,
  SafetySweep,
  safetyLinksOf,
  TARGET_HTTP,
  TargetChecks,
  TargetHttp,
  TargetIndexer,
  TargetRecord,
} from '@shortlink/safety-domain';
import { TenantDirectory, TenantService } from '@shortlink/tenants-domain';
import { UrlPolicy } from '@shortlink/url-policy';
import { EventPublisher } from '@shortlink/webhooks-domain';
import { BrokenLinksController } from './broken-links.controller';
import { LeasedJob } from './leased-job';
import { ModerationController } from './moderation.controller';
import { ModerationDesk } from './moderation-desk';
import { ReportController } from './report.controller';
import { AuditedSafetyNotices } from './safety-notices';

/** The ports the safety context injects (the generation app). */
export const SAFETY_PORTS: readonly symbol[] = [
  SAFETY_STORE,
  FEED_READER,
  REMOTE_REPUTATION,
  TARGET_HTTP,
  LINK_CHANGE_FEED,
  LINK_REPOSITORY,
  CODE_SECRET,
  URL_POLICY,
];

/** How long a job's lease holds without its instance: the longest a dead instance's job waits for another. */
const JOB_LEASE_MS = 30_000;

/**
 * What LinkService consults and tells on every create and edit, with no dependency on it (so that
 * the links context can inject it): the reputation of targets (the feeds in memory, Web Risk) and
 * the index of targets by host (docs/design.md, "Trust and safety").
 */
@Module({})
export class SafetyScreeningModule {
  static forRoot(config: AppConfig): DynamicModule {
    const s = config.safety;
    return {
      module: SafetyScreeningModule,
      providers: [
        Lifecycle,
        {
          provide: ReputationService,
          inject: [REMOTE_REPUTATION, METRICS_REGISTRY],
          useFactory: (remote: RemoteReputation | null, registry: Registry) => {
            const skipped = talliedCounter(
              'shortlink_reputation_remote_skipped_total',
              'Targets the remote reputation service (Web Risk) did not judge at create or edit, by why (screened later)',
              'why',
              [registry],
              ['budget', 'error', 'timeout'],
            );
            return new ReputationService(new FeedSet(), remote, {
              cacheHosts: s.webRisk.cacheHosts,
              missTtlMs: s.webRisk.cacheMs,
              remotePerSecond: s.webRisk.requestsPerSecond,
              remoteTimeoutMs: s.webRisk.timeoutMs,
              onRemoteSkipped: (why) => skipped(why),
            });
          },
        },
        {
          // Nobody judges targets with URL_REPUTATION_DRIVER=none.
          provide: TARGET_REPUTATION,
          inject: [ReputationService],
          useFactory: (reputation: ReputationService) => (s.reputation.feeds || s.reputation.webRisk ? reputation : null),
        },
        {
          provide: TargetIndexer,
          inject: [SAFETY_STORE, Lifecycle, APP_LOGGER],
          useFactory: (store: SafetyStore, lifecycle: Lifecycle, appLogger: PinoNestLogger) => {
            const logger = appLogger.scoped('Safety');
            const indexer = new TargetIndexer(store, {
              onFailed: (error) => logger.warn(`the index of link targets waits for the meta database: ${(error as Error).message}`),
              onDropped: (count) => logger.warn(`${count} link changes dropped from the index's queue; the sweep finds them`),
            });
            lifecycle.manage({ stop: () => indexer.stop() });
            return indexer;
          },
        },
        { provide: LINK_OBSERVER, useExisting: TargetIndexer },
      ],
      exports: [ReputationService, TARGET_REPUTATION, TargetIndexer, LINK_OBSERVER],
    };
  }
}

/**
 * The safety jobs of the generation app (docs/design.md, "Trust and safety"): every instance reads
 * the feeds (for its own checks at create and edit); the dead-link checks, the relay of visitors'
 * reports and the sweep run on one instance of the fleet at a time, each under a lease.
 */
@Injectable()
class SafetyJobs {
  readonly owner = `generation-${randomUUID()}`;

  constructor(
    @Inject(FeedWatcher) feeds: FeedWatcher,
    @Inject(TargetChecks) checks: TargetChecks,
    @Inject(ReportRelay) relay: ReportRelay,
    @Inject(SafetySweep) sweep: SafetySweep,
    @Inject(SAFETY_STORE) store: SafetyStore,
    @Inject(TargetIndexer) indexer: TargetIndexer,
    @Inject(Lifecycle) lifecycle: Lifecycle,
    @Inject(APP_LOGGER) appLogger: PinoNestLogger,
    @Inject('SAFETY_CONFIG') config: AppConfig,
  ) {
    const s = config.safety;
    const logger = appLogger.scoped('Safety');
    const jobs: LeasedJob[] = [];
    const leased = (name: string, intervalMs: number, step: (stillHeld: () => Promise<boolean>) => Promise<void>) =>
      jobs.push(new LeasedJob(store, { name, owner: this.owner, intervalMs, leaseMs: JOB_LEASE_MS }, step, logger));
    if (s.checks.requestsPerSecond > 0) {
      leased('link-checks', s.jobsIntervalMs, async () => {
        await checks.round();
      });
      // The targets of this instance's new links are checked by this instance, lease or not (TargetChecks.queueFirstChecks).
      indexer.afterIndexed((ids) => checks.queueFirstChecks(ids));
      let timer: NodeJS.Timeout | null = null;
      let running: Promise<unknown> = Promise.resolve();
      let stopped = false;
      const next = () => {
        if (stopped) return;
        timer = setTimeout(() => {
          running = checks
            .firstChecks()
            .catch((error: unknown) => logger.warn(`the first checks of new links' targets: ${(error as Error).message}`))
            .finally(next);
        }, s.jobsIntervalMs);
        timer.unref();
      };
      lifecycle.manage({
        start: next,
        stop: async () => {
          stopped = true;
          if (timer) clearTimeout(timer);
          await running;
        },
      });
    }
    leased('report-relay', s.jobsIntervalMs, async () => {
      while ((await relay.relay()) > 0);
    });
    let sweptAt = 0;
    leased('safety-sweep', s.jobsIntervalMs, async (stillHeld) => {
      if (sweptAt && Date.now() - sweptAt < s.sweep.intervalMs) return;
      const counts = await sweep.pass(stillHeld);
      let dropped = 0;
      for (let n = await store.dropUnused(1000); n > 0; n = await store.dropUnused(1000)) dropped += n;
      sweptAt = Date.now();
      logger.log(`sweep: ${counts.links} links indexed and judged by the feeds, ${counts.escalated} flagged or banned, ${dropped} unused targets dropped`);
    });
    let refreshing: Promise<void> | null = null;
    let timer: NodeJS.Timeout | null = null;
    const refresh = () => (refreshing ??= feeds.refresh().finally(() => (refreshing = null)));
    lifecycle.manage({
      start: async () => {
        if (s.reputation.feeds && s.reputation.feedList.length) {
          // The first read is awaited for a moment, so that the first creates already know the feeds.
          await Promise.race([refresh(), new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
          timer = setInterval(() => void refresh(), s.reputation.refreshMs);
          timer.unref();
        }
        for (const job of jobs) job.start();
      },
      stop: async () => {
        if (timer) clearInterval(timer);
        await refreshing;
        await Promise.all(jobs.map((job) => job.stop()));
      },
    });
  }
}

/**
 * Trust and safety (docs/design.md, "Trust and safety"): the operators' moderation API, a tenant's
 * choice for visitors of broken links, and the jobs: feeds, live links judged again, dead-link
 * checks, the relay of visitors' reports, the sweep.
 */
@Module({})
export class SafetyModule {
  static forRoot(config: AppConfig): DynamicModule {
    const s = config.safety;
    return {
      module: SafetyModule,
      controllers: [ModerationController, BrokenLinksController, ReportController],
      providers: [
        Lifecycle,
        { provide: 'SAFETY_CONFIG', useValue: config },
        {
          provide: AuditedSafetyNotices,
          inject: [AuditLog, EventPublisher],
          useFactory: (audit: AuditLog, events: EventPublisher) => new AuditedSafetyNotices(audit, events),
        },
        {
          provide: LiveRecheck,
          inject: [SAFETY_STORE, LinkService, LINK_REPOSITORY, ReputationService, AuditedSafetyNotices],
          useFactory: (store: SafetyStore, links: LinkService, repository: LinkRepository, reputation: ReputationService, notices: AuditedSafetyNotices) =>
            new LiveRecheck(store, safetyLinksOf(links, repository), reputation.feeds, store, notices),
        },
        {
          provide: FeedWatcher,
          inject: [FEED_READER, ReputationService, SAFETY_STORE, LiveRecheck, APP_LOGGER],
          useFactory: (reader: FeedReader, reputation: ReputationService, store: SafetyStore, recheck: LiveRecheck, appLogger: PinoNestLogger) => {
            const logger = appLogger.scoped('Safety');
            return new FeedWatcher(s.reputation.feeds ? s.reputation.feedList : [], reader, reputation, store, recheck, {
              owner: `feeds-${randomUUID()}`,
              leaseMs: 10 * 60_000,
              onLoaded: (spec, entries) => logger.log(`feed ${spec.format} (${describe(spec.location)}): ${entries} entries in use`),
              onRechecked: (spec, r) => logger.log(`feed ${spec.format}: ${r.links} live links judged again, ${r.escalated} flagged or banned`),
              onFailed: (spec, error) =>
                logger.warn(`feed ${spec.format} (${describe(spec.location)}) not read, its last entries stay in use: ${(error as Error).message}`),
            });
          },
        },
        {
          provide: TargetChecks,
          inject: [SAFETY_STORE, TARGET_HTTP, LinkService, LINK_REPOSITORY, AuditedSafetyNotices, ReputationService, LiveRecheck, METRICS_REGISTRY],
          useFactory: (
            store: SafetyStore,
            http: TargetHttp,
            links: LinkService,
            repository: LinkRepository,
            notices: AuditedSafetyNotices,
            reputation: ReputationService,
            recheck: LiveRecheck,
            registry: Registry,
          ) => {
            const checked = talliedCounter(
              'shortlink_link_checks_total',
              'Dead-link checks of targets, by the state found',
              'state',
              [registry],
              ['ok', 'broken', 'unchecked'],
            );
            // Web Risk screens each target again on the checks' schedule (what a target became since its link was made).
            const screen = async (target: TargetRecord) => {
              checked(target.state);
              if (!s.reputation.webRisk || !reputation.hasRemote) return;
              const verdict = await reputation.remoteVerdict(target.url, target.host, 10_000);
              if (verdict === null) return;
              for (let after: string | null = null; ;) {
                const refs = await store.linksOfTarget(target.urlHash, after, 200);
                for (const ref of refs) await recheck.apply(ref, verdict);
                if (refs.length < 200) break;
                after = refs[refs.length - 1].linkId;
              }
            };
            return new TargetChecks(store, http, safetyLinksOf(links, repository), notices, s.checks, undefined, undefined, screen);
          },
        },
        {
          provide: ReportRelay,
          inject: [SAFETY_STORE, AuditedSafetyNotices],
          useFactory: (store: SafetyStore, notices: AuditedSafetyNotices) => new ReportRelay(store, store, notices),
        },
        {
          provide: SafetySweep,
          inject: [LINK_REPOSITORY, SAFETY_STORE, LiveRecheck],
          useFactory: (repository: LinkRepository, store: SafetyStore, recheck: LiveRecheck) =>
            new SafetySweep(repository, store, recheck, { linksPerSecond: s.sweep.linksPerSecond }),
        },
        {
          provide: BrokenLinkSettingsService,
          inject: [SAFETY_STORE, URL_POLICY, TenantDirectory],
          useFactory: (store: SafetyStore, urls: UrlPolicy, tenants: TenantDirectory) => {
            // The URL policy of link targets, the tenants' own domains refused as loops.
            const policy = urls.alsoServing({ isServed: (host) => tenants.isTenantDomain(host) });
            return new BrokenLinkSettingsService(store, async (raw, field) => (await policy.check(raw, field)).url);
          },
        },
        {
          provide: ModerationDesk,
          inject: [SAFETY_STORE, LINK_COMMANDS, LINK_REPOSITORY, TenantService, TenantDirectory, LINK_CHANGE_FEED, AuditedSafetyNotices, CODE_SECRET],
          useFactory: (
            store: SafetyStore,
            commands: LinkCommands<AuditContext>,
            repository: LinkRepository,
            tenants: TenantService,
            directory: TenantDirectory,
            feed: LinkChangeFeed,
            notices: AuditedSafetyNotices,
            codeSecret: string,
          ) => new ModerationDesk({ store, commands, repository, tenants, directory, feed, notices, cursors: new ListCursors(codeSecret) }),
        },
        SafetyJobs,
      ],
    };
  }
}

/** A feed's location for the log: a URL without its query (a key may be there), a file as is. */
function describe(location: string): string {
  if (!/^https?:\/\//i.test(location)) return location;
  const url = new URL(location);
  return `${url.origin}${url.pathname}`;
}
