export { ConsistentHashRing, DEFAULT_VIRTUAL_NODES } from './consistent-hash-ring';
export { createShardRouter } from './create-router';
export { murmur32 } from './hash';
export { planRebalance } from './rebalance-planner';
export { ShardRouterError } from './shard-router';
export type { ShardNode, ShardRouter } from './shard-router';
