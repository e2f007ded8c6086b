export * from './analytics.module';
export * from './click-consumer.service';
