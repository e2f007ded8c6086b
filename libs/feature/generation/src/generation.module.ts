import { DynamicModule, Inject, Injectable, Logger, Module, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '@shortlink/config';
import { Infrastructure } from '@shortlink/infrastructure';
import { LinkService, TenantService } from '@shortlink/links-domain';
import { APP_CONFIG, ApiKeyGuard, createFastifyApp, CREDENTIAL_VERIFIER, HealthModule, loggingModule, PlatformModule } from '@shortlink/nest-platform';
import { LinksController } from './links.controller';

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
export class GenerationModule implements OnApplicationBootstrap {
  private readonly logger = new Logger('Generation');

  constructor(
    @Inject(TenantService) private readonly tenants: TenantService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(BootstrapOutcome) private readonly outcome: BootstrapOutcome,
    @Inject(GENERATION_OPTIONS) private readonly options: GenerationOptions,
  ) {}

  static forRoot(config: AppConfig, infra: Infrastructure, options: GenerationOptions = {}): DynamicModule {
    return {
      module: GenerationModule,
      imports: [loggingModule('generation', config.runtime.logLevel), PlatformModule.forApp('generation', config), HealthModule.withProbes(() => infra.healthProbes(['meta-db', 'shard-', 'cache']))],
      controllers: [LinksController],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: LinkService, useFactory: () => infra.linkService() },
        { provide: TenantService, useFactory: () => infra.tenantService() },
        { provide: CREDENTIAL_VERIFIER, inject: [TenantService], useFactory: (tenants: TenantService) => ({ verify: async (key: unknown) => ({ tenantId: (await tenants.authenticate(key)).id }) }) },
        ApiKeyGuard,
        BootstrapOutcome,
        { provide: GENERATION_OPTIONS, useValue: options },
      ],
    };
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

export async function createGenerationApp(config: AppConfig, infra: Infrastructure, options: GenerationOptions = {}) {
  return createFastifyApp(GenerationModule.forRoot(config, infra, options), config);
}
