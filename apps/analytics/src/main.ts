import 'reflect-metadata';
import { ANALYTICS_PORTS, AnalyticsFeatureModule } from '@shortlink/analytics-feature';
import { runApp } from '@shortlink/wiring';

runApp('analytics', () => AnalyticsFeatureModule.forRoot(), ANALYTICS_PORTS);
