import 'reflect-metadata';
import { ANALYTICS_OPENAPI, ANALYTICS_PORTS, AnalyticsFeatureModule, connectClickConsumer } from '@shortlink/analytics-feature';
import { runApp } from '@shortlink/wiring';

runApp('analytics', () => AnalyticsFeatureModule.forRoot(), ANALYTICS_PORTS, ANALYTICS_OPENAPI, connectClickConsumer);
