export * from './api-key.guard';
export * from './problem-details.filter';
export * from './metrics';
export * from './health';
export * from './app-factory';
export * from './logging';
export const APP_CONFIG = Symbol('APP_CONFIG');
