export { ANALYTICS_OPENAPI, ANALYTICS_PORTS, AnalyticsFeatureModule } from './analytics-feature.module';
export { connectClickConsumer } from './click-transport';
