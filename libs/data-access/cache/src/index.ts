export * from './memory/memory-cache-store';
export * from './redis/redis-cluster-store';
export * from './snapshot/file-snapshot-store';
export * from './memory/memory-link-change-feed';
export * from './redis/redis-link-change-feed';
