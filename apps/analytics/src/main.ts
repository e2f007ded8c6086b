import 'reflect-metadata';
import { ANALYTICS_OPENAPI, ANALYTICS_PORTS, AnalyticsAppModule, connectClickConsumer } from '@shortlink/analytics-composition';
import { runApp } from '@shortlink/wiring';

runApp('analytics', () => AnalyticsAppModule.forRoot(), ANALYTICS_PORTS, ANALYTICS_OPENAPI, connectClickConsumer);
