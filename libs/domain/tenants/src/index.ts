export * from './tenant';
export * from './ports';
export * from './tenant-service';
export * from './api-keys';
export * from './credentials';
export * from './rate-limits';
export * from './tenant-directory';
export * from './concurrency-slots';
