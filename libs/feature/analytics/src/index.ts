export * from './analytics-feature.module';
export * from './click-consumer.service';
export * from './click-transport';
