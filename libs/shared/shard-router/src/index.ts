export { ConsistentHashRing, DEFAULT_VIRTUAL_NODES } from './consistent-hash-ring';
export { createShardRouter } from './create-router';
export { murmur32, murmur64Halves } from './hash';
export { planRebalance } from './rebalance-planner';
export { type ShardNode, type ShardRouter, ShardRouterError } from './shard-router';
