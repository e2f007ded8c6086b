import { DynamicModule, Inject, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Registry } from 'prom-client';
import { AppConfig } from '@shortlink/config';
import { Infrastructure } from '@shortlink/infrastructure';
import { TenantService } from '@shortlink/links-domain';
import { CLICK_AGGREGATE_STORE } from '@shortlink/clicks-domain';
import { APP_CONFIG, ApiKeyGuard, createFastifyApp, CREDENTIAL_VERIFIER, HealthModule, loggingModule, METRICS_REGISTRY, PlatformModule } from '@shortlink/nest-platform';
import { ClickConsumer } from './click-consumer.service';
import { StatsController } from './stats.controller';

@Module({})
export class AnalyticsModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(ClickConsumer) private readonly consumer: ClickConsumer,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  static forRoot(config: AppConfig, infra: Infrastructure): DynamicModule {
    return {
      module: AnalyticsModule,
      imports: [loggingModule('analytics', config.runtime.logLevel), PlatformModule.forApp('analytics', config), HealthModule.withProbes(() => infra.healthProbes(['olap', 'meta-db']))],
      controllers: [StatsController],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: CLICK_AGGREGATE_STORE, useFactory: () => infra.clickAggregates() },
        { provide: TenantService, useFactory: () => infra.tenantService() },
        { provide: CREDENTIAL_VERIFIER, inject: [TenantService], useFactory: (tenants: TenantService) => ({ verify: async (key: unknown) => ({ tenantId: (await tenants.authenticate(key)).id }) }) },
        {
          provide: ClickConsumer,
          inject: [METRICS_REGISTRY],
          useFactory: async (registry: Registry) => new ClickConsumer(await infra.clickSource(), await infra.clickAggregates(), infra.visitorSecret(), registry),
        },
        ApiKeyGuard,
      ],
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.analytics.consumerEnabled) await this.consumer.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer.stop();
  }
}

export async function createAnalyticsApp(config: AppConfig, infra: Infrastructure) {
  return createFastifyApp(AnalyticsModule.forRoot(config, infra), config);
}
