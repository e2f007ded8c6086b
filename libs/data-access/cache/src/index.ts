export * from './memory/memory-cache-store';
export * from './redis/redis-cluster-store';
