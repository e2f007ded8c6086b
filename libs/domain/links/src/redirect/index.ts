export * from './l1-cache';
export * from './hot-key-detector';
export * from './cache-policy';
export * from './single-flight';
export * from './bloom-filter';
export * from './redirect-pipeline';
export * from './rate-limiters';
export * from './snapshot';
