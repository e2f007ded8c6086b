import { murmur64 } from './hash';
import { assertValidNodes, ShardNode, ShardRouter, ShardRouterError } from './shard-router';

const MASK64 = (1n << 64n) - 1n;
const MULTIPLIER = 2862933555777941757n;
const TWO_POW_31 = 2147483648;

/** Google's Jump Consistent Hash (Lamping & Veach 2014): bucket in [0, buckets) for a 64-bit key. */
export function jumpConsistentHash(key: bigint, buckets: number): number {
  if (!Number.isInteger(buckets) || buckets < 1) throw new ShardRouterError(`buckets must be a positive integer, got ${buckets}`);
  let k = key & MASK64;
  let b = -1;
  let j = 0;
  while (j < buckets) {
    b = j;
    k = (k * MULTIPLIER + 1n) & MASK64;
    j = Math.floor((b + 1) * (TWO_POW_31 / (Number(k >> 33n) + 1)));
  }
  return b;
}

/**
 * Jump hash over an ordered shard list. Buckets are positions, so only appending or removing the
 * last shard keeps movement minimal, and weights are not supported (docs/design.md, "Where the numbers come from").
 */
export class JumpHashRouter implements ShardRouter {
  readonly strategy = 'jump' as const;
  private readonly names: readonly string[];

  constructor(nodes: readonly ShardNode[]) {
    assertValidNodes(nodes);
    if (nodes.some((n) => (n.weight ?? 1) !== 1)) {
      throw new ShardRouterError('jump hash cannot weight shards; use the ring strategy for weighted shards');
    }
    this.names = nodes.map((n) => n.name);
  }

  shardFor(key: string): string {
    return this.names[jumpConsistentHash(murmur64(key), this.names.length)];
  }

  shards(): readonly string[] {
    return this.names;
  }

  withShard(node: ShardNode): JumpHashRouter {
    return new JumpHashRouter([...this.names.map((name) => ({ name })), node]);
  }

  /** Only the last shard can leave: removing another one would renumber buckets and move most keys. */
  withoutShard(name: string): JumpHashRouter {
    const last = this.names[this.names.length - 1];
    if (name !== last) {
      throw new ShardRouterError(`jump hash can only remove its last shard ("${last}"), not "${name}"`);
    }
    return new JumpHashRouter(this.names.slice(0, -1).map((n) => ({ name: n })));
  }
}
