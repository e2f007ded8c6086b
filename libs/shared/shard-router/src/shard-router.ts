/** A physical shard as the router sees it: a stable name and a relative capacity. */
export interface ShardNode {
  readonly name: string;
  /** Relative capacity; a weight-2 shard gets about twice the keys of a weight-1 shard. Default 1. */
  readonly weight?: number;
}

/** Maps a key (a short code) to the name of the shard that owns it. */
export interface ShardRouter {
  readonly strategy: 'ring' | 'jump';
  shardFor(key: string): string;
  shards(): readonly string[];
  /** A new router with the shard added; the receiver is not modified. */
  withShard(node: ShardNode): ShardRouter;
  /** A new router without the shard; the receiver is not modified. */
  withoutShard(name: string): ShardRouter;
}

export class ShardRouterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ShardRouterError';
  }
}

export function assertValidNodes(nodes: readonly ShardNode[]): void {
  if (nodes.length === 0) throw new ShardRouterError('a shard router needs at least one shard');
  const seen = new Set<string>();
  for (const node of nodes) {
    if (!node.name) throw new ShardRouterError('a shard needs a non-empty name');
    if (seen.has(node.name)) throw new ShardRouterError(`shard "${node.name}" is listed twice`);
    seen.add(node.name);
    const weight = node.weight ?? 1;
    if (!(weight > 0) || !Number.isFinite(weight)) {
      throw new ShardRouterError(`shard "${node.name}" has weight ${weight}; weights must be positive numbers`);
    }
  }
}
