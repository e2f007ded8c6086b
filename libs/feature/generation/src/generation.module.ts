import { DynamicModule, Inject, Logger, Module, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '@shortlink/config';
import { Infrastructure } from '@shortlink/infrastructure';
import { LinkService, TenantService } from '@shortlink/links-domain';
import { APP_CONFIG, ApiKeyGuard, createFastifyApp, HealthModule, loggingModule, MetricsModule } from '@shortlink/nest-platform';
import { LinksController } from './links.controller';

@Module({})
export class GenerationModule implements OnApplicationBootstrap {
  private readonly logger = new Logger('Generation');

  constructor(
    @Inject(TenantService) private readonly tenants: TenantService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  static forRoot(config: AppConfig, infra: Infrastructure): DynamicModule {
    return {
      module: GenerationModule,
      imports: [loggingModule('generation', config.runtime.logLevel), MetricsModule.forApp('generation'), HealthModule.withProbes(() => infra.healthProbes(['meta-db', 'shard-', 'cache']))],
      controllers: [LinksController],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: LinkService, useFactory: () => infra.linkService() },
        { provide: TenantService, useFactory: () => infra.tenantService() },
        ApiKeyGuard,
      ],
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    const key = this.config.links.bootstrapApiKey;
    if (key) await this.bootstrapTenant(key, 1);
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

export async function createGenerationApp(config: AppConfig, infra: Infrastructure) {
  return createFastifyApp(GenerationModule.forRoot(config, infra));
}
