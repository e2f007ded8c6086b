export { ANALYTICS_FEATURE_PORTS, ANALYTICS_OPENAPI, AnalyticsFeatureModule } from './analytics-feature.module';
export { connectClickConsumer } from './click-transport';
