export * from './memory/memory-cache-store';
export * from './redis/redis-cluster-store';
export * from './snapshot/file-snapshot-store';
