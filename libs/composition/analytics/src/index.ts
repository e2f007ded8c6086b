// The analytics app as one module, for its main and the embedded launcher.
export { ANALYTICS_PORTS, AnalyticsAppModule } from './analytics.module';
export { ANALYTICS_OPENAPI, connectClickConsumer } from '@shortlink/analytics-feature';
