import { randomUUID } from 'crypto';
import { hostname } from 'os';
import { DynamicModule, Inject, Injectable, Module, OnApplicationBootstrap } from '@nestjs/common';
import { Registry } from 'prom-client';
import type { AppConfig } from '@shortlink/config';
import { domainSettingsChange, LINK_CHANGE_FEED, LinkChangeFeed, URL_POLICY } from '@shortlink/links-domain';
import { UrlPolicy } from '@shortlink/url-policy';
import { APP_CONFIG, APP_LOGGER, ContextLogger, Lifecycle, METRICS_REGISTRY, PinoNestLogger, scheduleJob } from '@shortlink/nest-platform';
import {
  ApiKeyService,
  DOMAIN_OWNERSHIP_EVENTS,
  DOMAIN_OWNERSHIP_STORE,
  DOMAIN_PROBES,
  DomainOwnershipEvents,
  DomainOwnershipService,
  DomainOwnershipStore,
  DomainProbes,
  DOMAIN_SETTINGS_STORE,
  DomainSettingsService,
  DomainSettingsStore,
  TENANT_STORE,
  TenantDirectory,
  TenantService,
  TenantStore,
} from '@shortlink/tenants-domain';
import { DOMAIN_METHODS, DomainOwnershipController } from './domain-ownership.controller';
import { DomainMetrics } from './domain-verifier';
import { DomainsController } from './domains.controller';
import { KeysController } from './keys.controller';
import { TenantAdminController } from './tenant-admin.controller';

/** The ports the tenants context injects (besides the platform's API access). */
export const TENANTS_PORTS: readonly symbol[] = [TENANT_STORE, DOMAIN_SETTINGS_STORE, DOMAIN_OWNERSHIP_STORE, DOMAIN_PROBES, URL_POLICY, LINK_CHANGE_FEED];

/** What the start-up provisioning did; `generatedKey` is set only on the run that created it. */
@Injectable()
export class BootstrapOutcome {
  private resolve!: (value: { generatedKey: string | null }) => void;
  readonly result = new Promise<{ generatedKey: string | null }>((r) => (this.resolve = r));
  settle(generatedKey: string | null): void {
    this.resolve({ generatedKey });
  }
}

export interface TenantsOptions {
  /**
   * With no SHORTLINK_BOOTSTRAP_API_KEY, create the operator tenant on a first run (empty meta
   * database) with a generated key, which the launcher shows once (the embedded profile).
   */
  readonly firstRunKey?: boolean;
}

const TENANTS_OPTIONS = Symbol('TENANTS_OPTIONS');
/** The URL policy of domain settings: the configured one, also refusing targets on the tenants' own domains. */
const SETTINGS_URL_POLICY = Symbol('SETTINGS_URL_POLICY');

/** The operator's tenant, from SHORTLINK_BOOTSTRAP_API_KEY or (embedded profile) a first-run key. */
@Injectable()
class OperatorBootstrap implements OnApplicationBootstrap {
  private readonly logger: ContextLogger;

  constructor(
    @Inject(TenantService) private readonly tenants: TenantService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(BootstrapOutcome) private readonly outcome: BootstrapOutcome,
    @Inject(TENANTS_OPTIONS) private readonly options: TenantsOptions,
    @Inject(APP_LOGGER) logger: PinoNestLogger,
  ) {
    this.logger = logger.scoped('Tenants');
  }

  async onApplicationBootstrap(): Promise<void> {
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

/**
 * The verifier (docs/design.md, "Custom domains and TLS"): every instance with DOMAIN_VERIFIER on
 * looks for due checks every DOMAIN_VERIFIER_INTERVAL_MS; each check is taken by one instance, so
 * they run side by side safely. A run still going when the next is due is not doubled.
 */
@Injectable()
class DomainVerifier {
  constructor(
    @Inject(DomainOwnershipService) ownership: DomainOwnershipService,
    @Inject(Lifecycle) lifecycle: Lifecycle,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(APP_LOGGER) appLogger: PinoNestLogger,
  ) {
    if (!config.domains.verifier.enabled) return;
    const logger = appLogger.scoped('DomainVerifier');
    let running = false;
    let failing = false;
    scheduleJob(lifecycle, config.domains.verifier.intervalMs, async () => {
      if (running) return;
      running = true;
      try {
        await ownership.runDue();
        failing = false;
      } catch (error) {
        // Once per outage: the meta database is down, the checks wait for it.
        if (!failing) logger.warn(`domain checks not run: ${(error as Error).message}`);
        failing = true;
      } finally {
        running = false;
      }
    });
  }
}

/**
 * Tenants, their keys, plans and domains (docs/design.md, "Tenants, keys and plans"): the key API,
 * the domain API (a tenant's own domains, their proof and their settings; docs/design.md, "Custom
 * domains and TLS") and the operators' tenant API. DOMAIN_OWNERSHIP_EVENTS is bound by the app.
 * TenantService itself is the platform's (ApiAccessModule): every app with a tenant API checks keys against it.
 */
@Module({})
export class TenantsModule {
  static forRoot(options: TenantsOptions = {}): DynamicModule {
    return {
      module: TenantsModule,
      controllers: [KeysController, DomainOwnershipController, DomainsController, TenantAdminController],
      providers: [
        Lifecycle,
        { provide: TENANTS_OPTIONS, useValue: options },
        BootstrapOutcome,
        OperatorBootstrap,
        {
          provide: ApiKeyService,
          inject: [TENANT_STORE, APP_CONFIG],
          useFactory: (store: TenantStore, config: AppConfig) =>
            new ApiKeyService(store, { maxKeys: { free: config.plans.free.maxKeys, paid: config.plans.paid.maxKeys } }),
        },
        {
          // The tenants' domains as the redirect knows them, read again as often (REDIRECT_TENANT_REFRESH_MS):
          // the URL policy refuses targets on them (docs/design.md, "URL safety").
          provide: TenantDirectory,
          inject: [TENANT_STORE, Lifecycle, APP_LOGGER, APP_CONFIG],
          useFactory: (store: TenantStore, lifecycle: Lifecycle, appLogger: PinoNestLogger, config: AppConfig) => {
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
          provide: SETTINGS_URL_POLICY,
          inject: [URL_POLICY, TenantDirectory],
          useFactory: (urls: UrlPolicy, tenantDomains: TenantDirectory) => urls.alsoServing({ isServed: (host) => tenantDomains.holdsDomain(host) }),
        },
        { provide: DOMAIN_METHODS, inject: [APP_CONFIG], useFactory: (config: AppConfig) => config.domains.methods },
        {
          provide: DomainMetrics,
          inject: [METRICS_REGISTRY, DOMAIN_OWNERSHIP_STORE, TenantDirectory],
          useFactory: (registry: Registry, store: DomainOwnershipStore, directory: TenantDirectory) => new DomainMetrics(registry, store, directory),
        },
        {
          // Tenants' own domains and their proof (docs/design.md, "Custom domains and TLS"); the events are the app's (webhooks).
          provide: DomainOwnershipService,
          inject: [DOMAIN_OWNERSHIP_STORE, TenantService, TENANT_STORE, DOMAIN_PROBES, DOMAIN_OWNERSHIP_EVENTS, DomainMetrics, APP_CONFIG, APP_LOGGER],
          useFactory: (
            store: DomainOwnershipStore,
            tenants: TenantService,
            tenantStore: TenantStore,
            probes: DomainProbes,
            events: DomainOwnershipEvents,
            metrics: DomainMetrics,
            config: AppConfig,
            appLogger: PinoNestLogger,
          ) => {
            const d = config.domains;
            const logger = appLogger.scoped('DomainVerifier');
            return new DomainOwnershipService(store, tenants, tenantStore, probes, {
              maxDomains: { free: config.plans.free.maxDomains, paid: config.plans.paid.maxDomains },
              policy: {
                backoffMs: d.backoff.baseMs,
                backoffMaxMs: d.backoff.maxMs,
                recheckMs: d.recheckMs,
                unverifyAfter: d.unverifyAfter,
                retryWindowMs: d.retryWindowMs,
              },
              methods: d.methods,
              firstCheckMs: d.firstCheckMs,
              // Longer than any one check can take (DNS and HTTP side by side, each at most twice its timeout, then the certificate).
              leaseMs: 4 * d.checkTimeoutMs + (d.tlsFront?.timeoutMs ?? 0) + 10_000,
              holder: `generation@${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
              events,
              observer: {
                checked: (outcome) => metrics.checked(outcome),
                certificate: (outcome) => metrics.certificate(outcome),
                checkFailed: (domain, error) => {
                  metrics.checkFailed();
                  logger.warn(`domain check of ${domain} failed, taken again when its lease ends: ${error instanceof Error ? error.message : String(error)}`);
                },
              },
            });
          },
        },
        DomainVerifier,
        {
          // Settings are told on the link channel, so that they reach the redirect within the bound of link edits (docs/design.md, "Domain settings").
          provide: DomainSettingsService,
          inject: [DOMAIN_SETTINGS_STORE, TENANT_STORE, SETTINGS_URL_POLICY, LINK_CHANGE_FEED, APP_CONFIG],
          useFactory: (store: DomainSettingsStore, tenantStore: TenantStore, urls: UrlPolicy, feed: LinkChangeFeed, config: AppConfig) =>
            new DomainSettingsService(store, tenantStore, {
              serviceDomains: config.links.domains,
              checkUrl: async (raw, field) => (await urls.check(raw, field)).url,
              changes: { settingsChanged: (domain, version) => feed.publish(domainSettingsChange(domain, version)) },
            }),
        },
      ],
      exports: [ApiKeyService, TenantDirectory, DomainSettingsService, DomainOwnershipService, BootstrapOutcome],
    };
  }
}
