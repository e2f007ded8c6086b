import { DynamicModule, Inject, Injectable, Module } from '@nestjs/common';
import type { AppConfig } from '@shortlink/config';
import {
  CODE_SECRET,
  LINK_CHANGE_FEED,
  LINK_EVENT_OUTBOXES,
  LINK_REPOSITORY,
  LinkEventRelay,
  LINK_OBSERVER,
  LinkObserver,
  LinkRepository,
  LinkService,
  ListCursors,
  PASSWORD_HASHER,
  PasswordHasher,
  SegmentIdAllocator,
  SEQUENCE_STORE,
  SequenceStore,
  TAG_TRACKING_STORE,
  TagTrackingStore,
  TARGET_REPUTATION,
  URL_POLICY,
} from '@shortlink/links-domain';
import { BATCH_RECORD_STORE, BatchCreator, BatchRecordStore, BulkLinks } from '@shortlink/link-batch';
import { CodeStrategy, HashCodeStrategy, SequenceCodeStrategy } from '@shortlink/link-codes';
import { TargetReputation, UrlPolicy } from '@shortlink/url-policy';
import { APP_CONFIG, APP_LOGGER, Lifecycle, PinoNestLogger, scheduleJob } from '@shortlink/nest-platform';
import { CACHE_STORE, ReadPathModule } from '@shortlink/read-path';
import { BatchSlots, SLOT_STORE, SlotStore, TenantDirectory, TenantService } from '@shortlink/tenants-domain';
import { BatchController } from './batch/batch.controller';
import { LinkExportController } from './link-export.controller';
import { LinkModerationController } from './link-moderation.controller';
import { LinkPresenter } from './link-presenter';
import { LinksController } from './links.controller';
import { linkEventRelayProvider } from './link-event-relay.provider';
import { TagsController } from './tags.controller';

/** The ports the links context injects. */
export const LINKS_PORTS: readonly symbol[] = [
  SEQUENCE_STORE,
  LINK_REPOSITORY,
  LINK_EVENT_OUTBOXES,
  CACHE_STORE,
  CODE_SECRET,
  LINK_CHANGE_FEED,
  PASSWORD_HASHER,
  URL_POLICY,
  BATCH_RECORD_STORE,
  SLOT_STORE,
  TAG_TRACKING_STORE,
];

/** The sequence every link id comes from, single or batch. */
const LINK_SEQUENCE = 'links';
/** The code strategy of the configuration (its key: docs/design.md, "Security model"). */
const CODE_STRATEGY = Symbol('CODE_STRATEGY');
/** The URL policy of creates and edits: the configured one, also refusing targets on the tenants' own domains. */
const LINKS_URL_POLICY = Symbol('LINKS_URL_POLICY');

/**
 * Every instance runs the expiry job; each shard's statement locks the rows it marks, so two
 * instances never mark the same link twice. Batch idempotency records past their retention go too
 * (docs/design.md, "Batch creation").
 */
@Injectable()
class LinkExpiry {
  constructor(
    @Inject(LinkService) links: LinkService,
    @Inject(BATCH_RECORD_STORE) batches: BatchRecordStore,
    @Inject(Lifecycle) lifecycle: Lifecycle,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(APP_LOGGER) appLogger: PinoNestLogger,
  ) {
    const logger = appLogger.scoped('Links');
    scheduleJob(lifecycle, config.links.expiryJobIntervalMs, async () => {
      await links.expireDue().then(
        ({ expired, purged }) => (expired || purged) && logger.log(`expiry job: ${expired} links marked expired, ${purged} purged after their quarantine`),
        (error) => logger.warn(`expiry job failed: ${(error as Error).message}`),
      );
      await batches.purgeExpired(new Date(), 500).catch((error) => logger.warn(`batch record purge failed: ${(error as Error).message}`));
    });
  }
}

/**
 * Links (docs/design.md, "Link options", "Batch creation", "Import and export"): the link API, batch
 * creation and bulk changes, export, and the operators' moderation. What follows a change (its
 * audit entry, its webhook event) comes from LinkCommands (LINK_COMMANDS), which the app binds to
 * its hooks (docs/design.md, "Link events").
 */
@Module({})
export class LinksModule {
  static forRoot(config: AppConfig): DynamicModule {
    const links = config.links;
    return {
      module: LinksModule,
      imports: [ReadPathModule.forWrites(config)],
      // BatchController first: its static paths (/batch, /bulk) read better before the /:code routes.
      controllers: [BatchController, LinksController, TagsController, LinkExportController, LinkModerationController],
      providers: [
        Lifecycle,
        {
          provide: CODE_STRATEGY,
          inject: [CODE_SECRET],
          useFactory: (codeSecret: string): CodeStrategy => (links.codeStrategy === 'hash' ? new HashCodeStrategy() : new SequenceCodeStrategy(codeSecret)),
        },
        {
          provide: SegmentIdAllocator,
          inject: [SEQUENCE_STORE],
          useFactory: (sequences: SequenceStore) => new SegmentIdAllocator(sequences, LINK_SEQUENCE, links.idBlockSize),
        },
        {
          provide: LINKS_URL_POLICY,
          inject: [URL_POLICY, TenantDirectory],
          useFactory: (urls: UrlPolicy, tenantDomains: TenantDirectory) => urls.alsoServing({ isServed: (host) => tenantDomains.holdsDomain(host) }),
        },
        // Every link change's events, from the shards' outboxes to the caches (docs/design.md, "Edits reach every instance").
        linkEventRelayProvider(config),
        {
          provide: LinkService,
          inject: [
            LINK_REPOSITORY,
            SegmentIdAllocator,
            CODE_STRATEGY,
            LinkEventRelay,
            PASSWORD_HASHER,
            LINKS_URL_POLICY,
            TenantService,
            CODE_SECRET,
            // The safety context's, when the app mounts it (docs/design.md, "Trust and safety").
            { token: TARGET_REPUTATION, optional: true },
            { token: LINK_OBSERVER, optional: true },
            // Conversion tracking on tags (docs/design.md, "Conversions").
            { token: TAG_TRACKING_STORE, optional: true },
          ],
          useFactory: (
            repository: LinkRepository,
            ids: SegmentIdAllocator,
            codes: CodeStrategy,
            events: LinkEventRelay,
            passwords: PasswordHasher,
            urls: UrlPolicy,
            tenantDomains: TenantService,
            codeSecret: string,
            reputation: TargetReputation | null | undefined,
            observer: LinkObserver | null | undefined,
            tagTracking: TagTrackingStore | null | undefined,
          ) =>
            new LinkService(
              { links: repository, ids, codes, events, passwords, urls, tenantDomains, reputation, observer, tagTracking },
              {
                defaultDomain: links.defaultDomain,
                sharedDomains: links.domains,
                retireForMs: links.retireForMs,
                // Its own key, derived by HKDF from the code secret: every instance opens every cursor (docs/design.md, "Listing").
                listCursors: new ListCursors(codeSecret),
              },
            ),
        },
        {
          provide: BatchCreator,
          inject: [LinkService, LINK_REPOSITORY, SEQUENCE_STORE, CODE_STRATEGY, BATCH_RECORD_STORE],
          useFactory: (service: LinkService, repository: LinkRepository, sequences: SequenceStore, codes: CodeStrategy, records: BatchRecordStore) => {
            const b = config.batch;
            return new BatchCreator(
              { links: service, repository, sequences, codes, records },
              { chunkRows: b.chunkRows, insertRows: b.insertRows, leaseMs: b.leaseMs, retentionMs: b.retentionMs, sequence: LINK_SEQUENCE },
            );
          },
        },
        {
          provide: BulkLinks,
          inject: [LinkService],
          useFactory: (service: LinkService) => new BulkLinks(service, { maxLinks: config.batch.bulkMaxLinks, concurrency: config.batch.bulkConcurrency }),
        },
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
        LinkPresenter,
        LinkExpiry,
      ],
      exports: [LinkService, BulkLinks, LinkPresenter],
    };
  }
}
