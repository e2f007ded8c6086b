import { murmur32 } from './hash';
import { assertValidNodes, ShardNode, ShardRouter, ShardRouterError } from './shard-router';

export interface RingOptions {
  /** Virtual nodes per unit of weight (150 by default: docs/design.md, "Where the numbers come from"). */
  readonly virtualNodes?: number;
}

export const DEFAULT_VIRTUAL_NODES = 150;

/**
 * Consistent hash ring with virtual nodes over the 32-bit MurmurHash3 space.
 * Each shard is placed at `virtualNodes × weight` points named `${shard}#${i}`; a key belongs to
 * the first point clockwise from its hash. Lookup is a binary search over the sorted points.
 */
export class ConsistentHashRing implements ShardRouter {
  readonly strategy = 'ring' as const;
  private readonly points: Uint32Array;
  private readonly owners: string[];
  private readonly nodes: readonly ShardNode[];
  private readonly virtualNodes: number;

  constructor(nodes: readonly ShardNode[], options: RingOptions = {}) {
    assertValidNodes(nodes);
    this.virtualNodes = options.virtualNodes ?? DEFAULT_VIRTUAL_NODES;
    if (!Number.isInteger(this.virtualNodes) || this.virtualNodes < 1) {
      throw new ShardRouterError(`virtualNodes must be a positive integer, got ${this.virtualNodes}`);
    }
    this.nodes = [...nodes];
    const entries: Array<[number, string]> = [];
    for (const node of this.nodes) {
      const count = Math.max(1, Math.round(this.virtualNodes * (node.weight ?? 1)));
      for (let i = 0; i < count; i++) entries.push([murmur32(`${node.name}#${i}`), node.name]);
    }
    // Ties on a point (rare 32-bit collisions) go to the smaller name so that the ring does not
    // depend on the order in which shards were listed.
    entries.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
    this.points = Uint32Array.from(entries, (e) => e[0]);
    this.owners = entries.map((e) => e[1]);
  }

  shardFor(key: string): string {
    return this.owners[this.pointIndexFor(murmur32(key))];
  }

  shards(): readonly string[] {
    return this.nodes.map((n) => n.name);
  }

  /** Number of points on the ring (virtual nodes over all shards). */
  get size(): number {
    return this.points.length;
  }

  withShard(node: ShardNode): ConsistentHashRing {
    return new ConsistentHashRing([...this.nodes, node], { virtualNodes: this.virtualNodes });
  }

  withoutShard(name: string): ConsistentHashRing {
    if (!this.nodes.some((n) => n.name === name)) throw new ShardRouterError(`shard "${name}" is not on the ring`);
    return new ConsistentHashRing(
      this.nodes.filter((n) => n.name !== name),
      { virtualNodes: this.virtualNodes },
    );
  }

  /** Index of the first point >= hash, wrapping to 0 past the end. */
  private pointIndexFor(hash: number): number {
    const points = this.points;
    let lo = 0;
    let hi = points.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (points[mid] < hash) lo = mid + 1;
      else hi = mid;
    }
    return lo === points.length ? 0 : lo;
  }
}
