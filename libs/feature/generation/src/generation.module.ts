import { DynamicModule, Inject, Injectable, Module, OnApplicationBootstrap, OnApplicationShutdown, Provider, Type } from '@nestjs/common';
import { AUDIT_LOG_STORE, AuditLog } from '@shortlink/audit-domain';
import type { AppConfig } from '@shortlink/config';
import {
  BATCH_RECORD_STORE,
  BatchCreator,
  BatchRecordStore,
  BulkLinks,
  CODE_SECRET,
  CodeStrategy,
  domainSettingsChange,
  HashCodeStrategy,
  LINK_CHANGE_FEED,
  LINK_CHANGE_HOOKS,
  LINK_EVENT_OUTBOXES,
  LINK_REPOSITORY,
  LinkChangeFeed,
  LinkEventRelay,
  LinkRepository,
  LinkService,
  ListCursors,
  PASSWORD_HASHER,
  PasswordHasher,
  SegmentIdAllocator,
  SEQUENCE_STORE,
  SequenceCodeStrategy,
  SequenceStore,
  URL_POLICY,
  UrlPolicy,
} from '@shortlink/links-domain';
import { CACHE_STORE, ReadPathModule } from '@shortlink/read-path';
import {
  MAILER,
  Mailer,
  MemberService,
  OIDC_CLIENT,
  OidcClient,
  PEOPLE_STORE,
  PeopleStore,
  SecretBox,
  SessionService,
  SSO_STORE,
  SsoService,
  SsoStore,
} from '@shortlink/people-domain';
import {
  EventPublisher,
  PLATFORM_EVENT_SINK,
  PlatformEventSink,
  SecretBox as WebhookSecretBox,
  WEBHOOK_STORE,
  WEBHOOK_URL_GUARD,
  WebhookService,
  WebhookStore,
  WebhookUrlGuard,
} from '@shortlink/webhooks-domain';
import {
  API_ACCESS_PORTS,
  API_ACCESS_PROVIDERS,
  APP_CONFIG,
  APP_LOGGER,
  AUDIT_LOG_PROVIDER,
  ContextLogger,
  Lifecycle,
  PEOPLE_SESSION_PROVIDERS,
  PinoNestLogger,
  SessionController,
} from '@shortlink/nest-platform';
import {
  ApiKeyService,
  BatchSlots,
  DOMAIN_SETTINGS_STORE,
  DomainSettingsService,
  DomainSettingsStore,
  SLOT_STORE,
  SlotStore,
  TENANT_STORE,
  TenantDirectory,
  TenantService,
  TenantStore,
} from '@shortlink/tenants-domain';
import { AdminController } from './admin.controller';
import { ConsoleAnalyticsRelay } from './console-analytics-relay';
import { ConsoleController } from './console.controller';
import { AuditLogController } from './audit/audit-log.controller';
import { LinkAudit } from './audit/link-audit';
import { BatchController } from './batch/batch.controller';
import { DomainsController } from './domains.controller';
import { KeysController } from './keys.controller';
import { LinkExportController } from './link-export.controller';
import { LinkPresenter } from './link-presenter';
import { LinksController } from './links.controller';
import { LinkChangeHooks } from './webhooks/link-events';
import { linkEventRelayProvider } from './link-event-relay.provider';
import { WebhooksController } from './webhooks/webhooks.controller';
import { AuthController } from './people/auth.controller';
import { MembersController } from './people/members.controller';
import { SsoController } from './people/sso.controller';

/** The ports the generation app injects; the composition binds them (wiring, or a shared bridge). */
export const GENERATION_PORTS: readonly symbol[] = [
  ...API_ACCESS_PORTS,
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
  DOMAIN_SETTINGS_STORE,
  AUDIT_LOG_STORE,
  WEBHOOK_STORE,
  WEBHOOK_URL_GUARD,
  PLATFORM_EVENT_SINK,
  PEOPLE_STORE,
  MAILER,
  SSO_STORE,
  OIDC_CLIENT,
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
    'Create and manage short links, keys, members, the settings of your domains and (operators) tenants. Every route needs an `x-api-key` whose scopes allow it, or a person’s session cookie (`POST /api/v1/auth/login`) whose role allows it, with `x-csrf-token` on writes; answers carry the plan’s RateLimit-* headers; errors are application/problem+json with a stable `code`.',
  tags: {
    links: 'Short links: create one or a batch, read, list, edit, delete, export, QR codes',
    keys: 'Your tenant’s API keys and their scopes',
    domains: 'The settings of your domains: redirects, branding, robots, app association files',
    audit: 'Who changed what, when and from where',
    webhooks: 'Signed deliveries of your links’ events to your endpoints (Standard Webhooks)',
    sso: 'Single sign-on with your OpenID Connect provider (owners)',
    admin: 'Operators only: tenants, their plans and domains, moderation',
  },
  sessions: true,
};

export interface GenerationOptions {
  /**
   * With no SHORTLINK_BOOTSTRAP_API_KEY, create the operator tenant on a first run (empty meta
   * database) with a generated key, which the launcher shows once (the embedded profile).
   */
  readonly firstRunKey?: boolean;
  /**
   * Routes the app mounts beside its own (the compatibility APIs, each a feature lib of its own):
   * their controllers and providers join this module, so they use its services (LinkService,
   * LINK_CHANGE_HOOKS, the API access providers) as the link API does.
   */
  readonly extensions?: readonly GenerationExtension[];
}

/** Controllers and providers an app mounts into the generation module. */
export interface GenerationExtension {
  readonly controllers?: readonly Type[];
  readonly providers?: readonly Provider[];
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

/** The URL policy of creates and edits: the configured one, also refusing targets on the tenants' own domains. */
const GENERATION_URL_POLICY = Symbol('GENERATION_URL_POLICY');

@Module({})
export class GenerationFeatureModule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger: ContextLogger;
  private expiryTimer: NodeJS.Timeout | null = null;

  constructor(
    @Inject(TenantService) private readonly tenants: TenantService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(BootstrapOutcome) private readonly outcome: BootstrapOutcome,
    @Inject(GENERATION_OPTIONS) private readonly options: GenerationOptions,
    @Inject(LinkService) private readonly links: LinkService,
    @Inject(BATCH_RECORD_STORE) private readonly batches: BatchRecordStore,
    @Inject(AuditLog) private readonly auditLog: AuditLog,
    @Inject(SessionService) private readonly sessions: SessionService,
    @Inject(APP_LOGGER) logger: PinoNestLogger,
  ) {
    this.logger = logger.scoped('Generation');
  }

  static forRoot(config: AppConfig, options: GenerationOptions = {}): DynamicModule {
    const links = config.links;
    return {
      module: GenerationFeatureModule,
      imports: [ReadPathModule.forWrites(config)],
      // BatchController first: its static paths (/batch, /bulk) read better before the /:code routes.
      controllers: [
        BatchController,
        LinksController,
        LinkExportController,
        KeysController,
        DomainsController,
        AdminController,
        AuditLogController,
        WebhooksController,
        MembersController,
        SsoController,
        SessionController,
        AuthController,
        ConsoleController,
        ConsoleAnalyticsRelay,
        ...(options.extensions ?? []).flatMap((e) => e.controllers ?? []),
      ],
      providers: [
        Lifecycle,
        { provide: GENERATION_OPTIONS, useValue: options },
        {
          provide: ApiKeyService,
          inject: [TENANT_STORE],
          useFactory: (store: TenantStore) => new ApiKeyService(store, { maxKeys: { free: config.plans.free.maxKeys, paid: config.plans.paid.maxKeys } }),
        },
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
          // The tenants' domains as the redirect knows them, read again as often (REDIRECT_TENANT_REFRESH_MS):
          // the URL policy refuses targets on them (docs/design.md, "URL safety").
          provide: TenantDirectory,
          inject: [TENANT_STORE, Lifecycle, APP_LOGGER],
          useFactory: (store: TenantStore, lifecycle: Lifecycle, appLogger: PinoNestLogger) => {
            const logger = appLogger.scoped('TenantDirectory');
            const directory = new TenantDirectory(store, {
              refreshMs: config.redirect.tenantRefreshMs,
              onOutage: (error) => logger.warn(`tenant domains not refreshed, the last ones stay in use: ${(error as Error).message}`),
            });
            lifecycle.manage({ start: () => directory.start(), stop: () => directory.stop() });
            return directory;
          },
        },
        {
          provide: GENERATION_URL_POLICY,
          inject: [URL_POLICY, TenantDirectory],
          useFactory: (urls: UrlPolicy, tenantDomains: TenantDirectory) => urls.alsoServing({ isServed: (host) => tenantDomains.isTenantDomain(host) }),
        },
        {
          // Settings are told on the link channel, so that they reach the redirect within the bound of link edits (docs/design.md, "Domain settings").
          provide: DomainSettingsService,
          inject: [DOMAIN_SETTINGS_STORE, TENANT_STORE, GENERATION_URL_POLICY, LINK_CHANGE_FEED],
          useFactory: (store: DomainSettingsStore, tenantStore: TenantStore, urls: UrlPolicy, feed: LinkChangeFeed) =>
            new DomainSettingsService(store, tenantStore, {
              serviceDomains: links.domains,
              checkUrl: async (raw, field) => (await urls.check(raw, field)).url,
              changes: { settingsChanged: (domain, version) => feed.publish(domainSettingsChange(domain, version)) },
            }),
        },
        // Every link change's events, from the shards' outboxes to the caches (docs/design.md, "Edits reach every instance").
        linkEventRelayProvider(config),
        {
          provide: LinkService,
          inject: [LINK_REPOSITORY, SegmentIdAllocator, CODE_STRATEGY, LinkEventRelay, PASSWORD_HASHER, GENERATION_URL_POLICY, TenantService, CODE_SECRET],
          useFactory: (
            repository: LinkRepository,
            ids: SegmentIdAllocator,
            codes: CodeStrategy,
            events: LinkEventRelay,
            passwords: PasswordHasher,
            urls: UrlPolicy,
            tenantDomains: TenantService,
            codeSecret: string,
          ) =>
            new LinkService(
              { links: repository, ids, codes, events, passwords, urls, tenantDomains },
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
        AUDIT_LOG_PROVIDER,
        {
          // The platform's events of link changes, for the webhook deliverer (docs/design.md, "Webhooks").
          provide: EventPublisher,
          inject: [PLATFORM_EVENT_SINK, Lifecycle, APP_LOGGER],
          useFactory: (sink: PlatformEventSink, lifecycle: Lifecycle, appLogger: PinoNestLogger) => {
            const logger = appLogger.scoped('Events');
            const publisher = new EventPublisher(sink, {
              onDeferred: (error, pending) => logger.warn(`events wait for the bus (${pending} in memory, retried every second): ${(error as Error)?.message}`),
              onDropped: (count) => logger.error(`${count} events dropped: the bus did not take them`),
            });
            lifecycle.manage({ stop: () => publisher.stop() });
            return publisher;
          },
        },
        // Each link change's audit entry and platform event, after the shard acknowledged it.
        { provide: LinkAudit, inject: [AuditLog, EventPublisher], useFactory: (log: AuditLog, events: EventPublisher) => new LinkChangeHooks(log, events) },
        { provide: LINK_CHANGE_HOOKS, useExisting: LinkAudit },
        {
          provide: WebhookService,
          inject: [WEBHOOK_STORE, CODE_SECRET, WEBHOOK_URL_GUARD, AuditLog],
          // The signing secrets are sealed under a key derived from the code secret (docs/design.md, "Webhooks").
          useFactory: (store: WebhookStore, codeSecret: string, guard: WebhookUrlGuard, audit: AuditLog) =>
            new WebhookService(store, new WebhookSecretBox(codeSecret), guard, audit),
        },
        {
          // Members and invitations (docs/design.md, "People and sessions"): passwords hashed like links' (argon2id).
          provide: MemberService,
          inject: [PEOPLE_STORE, PASSWORD_HASHER, MAILER, APP_LOGGER],
          useFactory: (store: PeopleStore, passwords: PasswordHasher, mailer: Mailer | null, appLogger: PinoNestLogger) => {
            const logger = appLogger.scoped('Invitations');
            return new MemberService(store, passwords, mailer, {
              invitationTtlMs: config.people.invitationTtlMs,
              acceptUrl: config.people.acceptUrl,
              passwordMinLength: config.people.passwordMinLength,
              onMailFailure: (error) => logger.warn(`invitation not mailed (the token is in the answer): ${(error as Error)?.message}`),
            });
          },
        },
        ...PEOPLE_SESSION_PROVIDERS,
        {
          // Single sign-on (docs/design.md, "Single sign-on"): client secrets and pending sign-ins sealed under keys derived from the code secret.
          provide: SsoService,
          inject: [SSO_STORE, OIDC_CLIENT, CODE_SECRET, SessionService, TenantService, AuditLog],
          useFactory: (store: SsoStore, oidc: OidcClient, codeSecret: string, sessions: SessionService, tenants: TenantService, log: AuditLog) =>
            new SsoService(store, oidc, new SecretBox(codeSecret, 'sso v1'), sessions, tenants, log, {
              callbackUrl: config.people.sso.callbackUrl,
              allowInsecureIssuers: config.people.sso.allowInsecureIssuers,
            }),
        },
        ...API_ACCESS_PROVIDERS,
        BootstrapOutcome,
        LinkPresenter,
        ...(options.extensions ?? []).flatMap((e) => e.providers ?? []),
      ],
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    // Every instance runs the expiry job; each shard's statement locks the rows it marks, so two
    // instances never mark the same link twice.
    this.expiryTimer = setInterval(() => {
      this.links.expireDue().then(
        ({ expired, purged }) => (expired || purged) && this.logger.log(`expiry job: ${expired} links marked expired, ${purged} purged after their quarantine`),
        (error) => this.logger.warn(`expiry job failed: ${(error as Error).message}`),
      );
      // Batch idempotency records past their retention (docs/design.md, "Batch creation").
      this.batches.purgeExpired(new Date(), 500).catch((error) => this.logger.warn(`batch record purge failed: ${(error as Error).message}`));
      // Audit entries past AUDIT_RETENTION_DAYS, in batches (docs/design.md, "Audit log").
      this.auditLog.purgeExpired().then(
        (purged) => purged && this.logger.log(`audit log: ${purged} entries past their retention deleted`),
        (error) => this.logger.warn(`audit log purge failed: ${(error as Error).message}`),
      );
      // Sessions past their idle or absolute end (docs/design.md, "People and sessions").
      this.sessions.purgeEnded().catch((error) => this.logger.warn(`session purge failed: ${(error as Error).message}`));
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

  onApplicationShutdown(): void {
    if (this.expiryTimer) clearInterval(this.expiryTimer);
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
