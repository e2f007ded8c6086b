import { ConsistentHashRing } from './consistent-hash-ring';
import { JumpHashRouter } from './jump-hash';
import { ShardNode, ShardRouter } from './shard-router';

export type ShardStrategy = 'ring' | 'jump';

export function createShardRouter(strategy: ShardStrategy, nodes: readonly ShardNode[], virtualNodes?: number): ShardRouter {
  return strategy === 'jump' ? new JumpHashRouter(nodes) : new ConsistentHashRing(nodes, { virtualNodes });
}
