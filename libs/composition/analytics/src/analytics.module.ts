import { DynamicModule, Module } from '@nestjs/common';
import { ANALYTICS_FEATURE_PORTS, AnalyticsFeatureModule } from '@shortlink/analytics-feature';
import { API_ACCESS_MODULE_PORTS, ApiAccessModule } from '@shortlink/nest-platform';
import { SignInModule } from '@shortlink/people-feature';
import { WEBHOOK_DELIVERY_PORTS, WebhookDeliveryModule } from '@shortlink/webhooks-feature';

/** The ports the analytics app injects; the composition binds them (wiring, or a shared bridge). */
export const ANALYTICS_PORTS: readonly symbol[] = [...new Set([...API_ACCESS_MODULE_PORTS, ...ANALYTICS_FEATURE_PORTS, ...WEBHOOK_DELIVERY_PORTS])];

@Module({})
export class AnalyticsAppModule {
  /**
   * The analytics app: the query API, the dashboard and the consumer; people sign in here too (the
   * dashboard's form); and, where the consumer runs, the webhook deliverer.
   */
  static forRoot(): DynamicModule {
    return { module: AnalyticsAppModule, imports: [ApiAccessModule, AnalyticsFeatureModule.forRoot(), SignInModule, WebhookDeliveryModule] };
  }
}
