export * from './shard-router';
export * from './consistent-hash-ring';
export * from './jump-hash';
export * from './rebalance-planner';
export * from './create-router';
export { murmur32, murmur64, murmur64Halves } from './hash';
