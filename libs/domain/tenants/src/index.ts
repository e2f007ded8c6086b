export * from './tenant';
export * from './ports';
export * from './tenant-service';
export * from './rate-limits';
export * from './tenant-directory';
export * from './concurrency-slots';
