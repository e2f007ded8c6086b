import { DynamicModule, Inject, Injectable, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '@shortlink/config';
import {
  BATCH_RECORD_STORE, BatchCreator, BatchRecordStore, BloomFilter, BloomMaintainer, BulkLinks, CACHE_STORE, CachePolicy, CacheStore, CODE_SECRET, CodeStrategy, HashCodeStrategy, LINK_CHANGE_FEED,
  LINK_REPOSITORY, LinkCache, LinkChangeFeed, LinkService, PASSWORD_HASHER, PasswordHasher, SegmentIdAllocator, SEQUENCE_STORE, SequenceCodeStrategy, SequenceStore, ShardedLinkRepository,
  URL_POLICY, UrlPolicy, writeThroughTtlMs, ListCursors,
} from '@shortlink/links-domain';
import { API_ACCESS_PORTS, API_ACCESS_PROVIDERS, APP_CONFIG, APP_LOGGER, PinoNestLogger } from '@shortlink/nest-platform';
import { BatchSlots, SLOT_STORE, SlotStore, TENANT_STORE, TenantDirectory, TenantService, TenantStore } from '@shortlink/tenants-domain';
import { AdminController } from './admin.controller';
import { BatchController } from './batch/batch.controller';
import { KeysController } from './keys.controller';
import { LinkExportController } from './link-export.controller';
import { LinkPresenter } from './link-presenter';
import { LinksController } from './links.controller';

/** The ports the generation app injects; the composition binds them (wiring, or a shared bridge). */
export const GENERATION_PORTS: readonly symbol[] = [
  ...API_ACCESS_PORTS, SEQUENCE_STORE, LINK_REPOSITORY, CACHE_STORE, CODE_SECRET, LINK_CHANGE_FEED, PASSWORD_HASHER, URL_POLICY, BATCH_RECORD_STORE, SLOT_STORE,
];

/** The sequence every link id comes from, single or batch. */
const LINK_SEQUENCE = 'links';
/** The code strategy of the configuration (its key: docs/design.md, "Security model"). */
const CODE_STRATEGY = Symbol('CODE_STRATEGY');

/** The generation app's OpenAPI document (docs/design.md, "Contract"). */
export const GENERATION_API = {
  title: 'shortlink generation API',
  version: '1',
  description:
    'Create and manage short links, keys and (operators) tenants. Every route needs an `x-api-key` whose scopes allow it; answers carry the plan’s RateLimit-* headers; errors are application/problem+json with a stable `code`.',
};

export interface GenerationOptions {
  /**
   * With no SHORTLINK_BOOTSTRAP_API_KEY, create the operator tenant on a first run (empty meta
   * database) with a generated key, which the launcher shows once (the embedded profile).
   */
  readonly firstRunKey?: boolean;
}

/** What the start-up provisioning did; `generatedKey` is set only on the run that created it. */
@Injectable()
export class BootstrapOutcome {
  private resolve!: (value: { generatedKey: string | null }) => void;
  readonly result = new Promise<{ generatedKey: string | null }>((r) => (this.resolve = r));
  settle(generatedKey: string | null): void {
    this.resolve({ generatedKey });
  }
}

const GENERATION_OPTIONS = Symbol('GENERATION_OPTIONS');

@Module({})
export class GenerationFeatureModule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Generation');

  constructor(
    @Inject(TenantService) private readonly tenants: TenantService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(BootstrapOutcome) private readonly outcome: BootstrapOutcome,
    @Inject(GENERATION_OPTIONS) private readonly options: GenerationOptions,
    @Inject(BloomMaintainer) private readonly bloom: BloomMaintainer,
    @Inject(LinkService) private readonly links: LinkService,
    @Inject(BATCH_RECORD_STORE) private readonly batches: BatchRecordStore,
    @Inject(TenantDirectory) private readonly tenantDomains: TenantDirectory,
  ) {}

  private expiryTimer: NodeJS.Timeout | null = null;

  static forRoot(config: AppConfig, options: GenerationOptions = {}): DynamicModule {
    const links = config.links;
    return {
      module: GenerationFeatureModule,
      // BatchController first: its static paths (/batch, /bulk) read better before the /:code routes.
      controllers: [BatchController, LinksController, LinkExportController, KeysController, AdminController],
      providers: [
        { provide: GENERATION_OPTIONS, useValue: options },
        {
          provide: CODE_STRATEGY,
          inject: [CODE_SECRET],
          useFactory: (codeSecret: string): CodeStrategy => (links.codeStrategy === 'hash' ? new HashCodeStrategy() : new SequenceCodeStrategy(codeSecret)),
        },
        {
          provide: BloomMaintainer,
          inject: [CACHE_STORE, LINK_REPOSITORY],
          useFactory: (cache: CacheStore, repository: ShardedLinkRepository) => new BloomMaintainer(new BloomFilter(cache, config.redirect.bloom), cache, repository),
        },
        {
          // The tenants' domains as the redirect knows them, read again as often (REDIRECT_TENANT_REFRESH_MS):
          // the URL policy refuses targets on them (docs/design.md, "URL safety").
          provide: TenantDirectory,
          inject: [TENANT_STORE],
          useFactory: (store: TenantStore) => {
            const logger = new Logger('TenantDirectory');
            return new TenantDirectory(store, {
              refreshMs: config.redirect.tenantRefreshMs,
              onOutage: (error) => logger.warn(`tenant domains not refreshed, the last ones stay in use: ${(error as Error).message}`),
            });
          },
        },
        {
          provide: LinkService,
          inject: [LINK_REPOSITORY, SEQUENCE_STORE, CACHE_STORE, CODE_STRATEGY, LINK_CHANGE_FEED, PASSWORD_HASHER, URL_POLICY, BloomMaintainer, TenantService, TenantDirectory, CODE_SECRET],
          useFactory: (
            repository: ShardedLinkRepository, sequences: SequenceStore, cache: CacheStore, codes: CodeStrategy, changes: LinkChangeFeed, passwords: PasswordHasher, urls: UrlPolicy, bloom: BloomMaintainer,
            tenants: TenantService, tenantDomains: TenantDirectory, codeSecret: string,
          ) => {
            const policy = new CachePolicy(config.redirect.policy);
            return new LinkService(
              repository,
              new SegmentIdAllocator(sequences, LINK_SEQUENCE, links.idBlockSize),
              codes,
              new LinkCache(cache),
              changes,
              passwords,
              urls.alsoServing({ isServed: (host) => tenantDomains.isTenantDomain(host) }),
              {
                defaultDomain: links.defaultDomain, sharedDomains: links.domains, retireForMs: links.retireForMs,
                cacheTtlMs: (link) => writeThroughTtlMs(policy, link, Date.now()),
                // Its own key, derived by HKDF from the code secret: every instance opens every cursor (docs/design.md, "Listing").
                listCursors: new ListCursors(codeSecret),
              },
              tenants,
              undefined,
              [(link) => bloom.added(link)],
            );
          },
        },
        {
          provide: BatchCreator,
          inject: [LinkService, LINK_REPOSITORY, SEQUENCE_STORE, CODE_STRATEGY, CACHE_STORE, BATCH_RECORD_STORE, BloomMaintainer],
          useFactory: (service: LinkService, repository: ShardedLinkRepository, sequences: SequenceStore, codes: CodeStrategy, cache: CacheStore, records: BatchRecordStore, bloom: BloomMaintainer) => {
            const b = config.batch;
            return new BatchCreator(service, repository, sequences, codes, new LinkCache(cache), records, bloom, {
              chunkRows: b.chunkRows, insertRows: b.insertRows, leaseMs: b.leaseMs, retentionMs: b.retentionMs, sequence: LINK_SEQUENCE,
            });
          },
        },
        { provide: BulkLinks, inject: [LinkService], useFactory: (service: LinkService) => new BulkLinks(service, { maxLinks: config.batch.bulkMaxLinks, concurrency: config.batch.bulkConcurrency }) },
        {
          provide: BatchSlots,
          inject: [SLOT_STORE, APP_LOGGER],
          useFactory: (slots: SlotStore, logger: PinoNestLogger) =>
            new BatchSlots(slots, config.plans, {
              leaseMs: config.batch.leaseMs,
              onFallback: (down, error) =>
                down
                  ? logger.warn(`batch slots: the shared store failed (${(error as Error)?.message}); counting per instance until it answers`, 'BatchSlots')
                  : logger.log('batch slots: the shared store answers again', 'BatchSlots'),
            }),
        },
        ...API_ACCESS_PROVIDERS,
        BootstrapOutcome,
        LinkPresenter,
      ],
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.tenantDomains.start();
    // Every instance runs the expiry job; each shard's statement locks the rows it marks, so two
    // instances never mark the same link twice.
    this.expiryTimer = setInterval(() => {
      this.links.expireDue().then(
        ({ expired, purged }) => (expired || purged) && this.logger.log(`expiry job: ${expired} links marked expired, ${purged} purged after their quarantine`),
        (error) => this.logger.warn(`expiry job failed: ${(error as Error).message}`),
      );
      // Batch idempotency records past their retention (docs/design.md, "Batch creation").
      this.batches.purgeExpired(new Date(), 500).catch((error) => this.logger.warn(`batch record purge failed: ${(error as Error).message}`));
    }, this.config.links.expiryJobIntervalMs);
    this.expiryTimer.unref();
    const key = this.config.links.bootstrapApiKey;
    if (key) {
      this.outcome.settle(null); // a key the operator chose is never echoed
      await this.bootstrapTenant(key, 1);
    } else if (this.options.firstRunKey) {
      this.outcome.settle(await this.tenants.bootstrapFirstRun());
    } else {
      this.outcome.settle(null);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.expiryTimer) clearInterval(this.expiryTimer);
    this.tenantDomains.stop();
    this.links.close();
    await this.bloom.close();
  }

  /** The meta database may still be starting: retry in the background rather than refuse to boot. */
  private async bootstrapTenant(key: string, attempt: number): Promise<void> {
    try {
      const tenant = await this.tenants.bootstrap(key);
      if (tenant) this.logger.log(`created bootstrap tenant ${tenant.id} for SHORTLINK_BOOTSTRAP_API_KEY`);
    } catch (error) {
      this.logger.warn(`bootstrap tenant not created yet (attempt ${attempt}): ${(error as Error).message}`);
      setTimeout(() => void this.bootstrapTenant(key, attempt + 1), Math.min(1000 * attempt, 10_000)).unref();
    }
  }
}
