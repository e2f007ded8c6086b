import { DynamicModule, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { Registry } from 'prom-client';
import { AppConfig } from '@shortlink/config';
import { Infrastructure } from '@shortlink/infrastructure';
import { RedirectResolver } from '@shortlink/links-domain';
import { ClickBuffer } from '@shortlink/clicks-domain';
import { APP_CONFIG, createFastifyApp, HealthModule, loggingModule, METRICS_REGISTRY, MetricsModule } from '@shortlink/nest-platform';
import { RedirectController } from './redirect.controller';
import { RedirectMetrics } from './redirect.metrics';

@Module({})
export class RedirectModule implements OnApplicationShutdown {
  constructor(@Inject(ClickBuffer) private readonly clicks: ClickBuffer) {}

  static forRoot(config: AppConfig, infra: Infrastructure): DynamicModule {
    return {
      module: RedirectModule,
      imports: [loggingModule('redirect', config.runtime.logLevel), MetricsModule.forApp('redirect'), HealthModule.withProbes(() => infra.healthProbes(['shard-', 'cache']))],
      controllers: [RedirectController],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: RedirectMetrics, useFactory: (registry: Registry) => new RedirectMetrics(registry), inject: [METRICS_REGISTRY] },
        { provide: RedirectResolver, useFactory: () => infra.redirectResolver() },
        {
          provide: ClickBuffer,
          inject: [RedirectMetrics],
          useFactory: async (metrics: RedirectMetrics) => {
            const buffer = new ClickBuffer(await infra.clickSink(), config.clickBuffer, {
              dropped: (n) => metrics.clicksDropped.inc(n),
              sizeChanged: (n) => metrics.clickBufferSize.set(n),
              sendFailed: () => metrics.clickSendFailures.inc(),
            });
            buffer.start();
            return buffer;
          },
        },
      ],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.clicks.close();
  }
}

export async function createRedirectApp(config: AppConfig, infra: Infrastructure) {
  return createFastifyApp(RedirectModule.forRoot(config, infra));
}
