import { DynamicModule, Inject, Injectable, Module, OnApplicationBootstrap } from '@nestjs/common';
import type { AppConfig } from '@shortlink/config';
import { domainSettingsChange, LINK_CHANGE_FEED, LinkChangeFeed, URL_POLICY } from '@shortlink/links-domain';
import { UrlPolicy } from '@shortlink/url-policy';
import { APP_CONFIG, APP_LOGGER, ContextLogger, Lifecycle, PinoNestLogger } from '@shortlink/nest-platform';
import {
  ApiKeyService,
  DOMAIN_SETTINGS_STORE,
  DomainSettingsService,
  DomainSettingsStore,
  TENANT_STORE,
  TenantDirectory,
  TenantService,
  TenantStore,
} from '@shortlink/tenants-domain';
import { DomainsController } from './domains.controller';
import { KeysController } from './keys.controller';
import { TenantAdminController } from './tenant-admin.controller';

/** The ports the tenants context injects (besides the platform's API access). */
export const TENANTS_PORTS: readonly symbol[] = [TENANT_STORE, DOMAIN_SETTINGS_STORE, URL_POLICY, LINK_CHANGE_FEED];

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
 * Tenants, their keys, plans and domains (docs/design.md, "Tenants, keys and plans"): the key API,
 * the domain settings API and the operators' tenant API. TenantService itself is the platform's
 * (ApiAccessModule): every app with a tenant API checks keys against it.
 */
@Module({})
export class TenantsModule {
  static forRoot(options: TenantsOptions = {}): DynamicModule {
    return {
      module: TenantsModule,
      controllers: [KeysController, DomainsController, TenantAdminController],
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
          useFactory: (urls: UrlPolicy, tenantDomains: TenantDirectory) => urls.alsoServing({ isServed: (host) => tenantDomains.isTenantDomain(host) }),
        },
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
      exports: [ApiKeyService, TenantDirectory, DomainSettingsService, BootstrapOutcome],
    };
  }
}
