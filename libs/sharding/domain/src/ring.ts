import { createShardRouter, DEFAULT_VIRTUAL_NODES, ShardNode, ShardRouter, ShardRouterError } from '@shortlink/shard-router';

/** The shard ring as configuration: which shards, their weights, the strategy (docs/design.md, "Online resharding"). */
export interface RingSpec {
  readonly strategy: 'ring' | 'jump';
  readonly virtualNodes: number;
  readonly shards: readonly ShardNode[];
}

/**
 * What the apps do with the keys that change owner while a move runs (docs/design.md, "Online
 * resharding"): `dual_write` reads the old owner and writes both; `copying` reads the new owner
 * first, then the old, and writes both; `frozen` reads the new owner and holds writes of moving
 * keys until the switch.
 */
export type MovePhase = 'dual_write' | 'copying' | 'frozen';
export const MOVE_PHASES: readonly MovePhase[] = ['dual_write', 'copying', 'frozen'];

export interface RingMove {
  readonly id: string;
  readonly phase: MovePhase;
  /** The ring the move leads to. */
  readonly to: RingSpec;
}

/** One version of the ring in the meta database: the ring, and the move in progress if any. */
export interface RingVersion {
  readonly version: number;
  readonly spec: RingSpec;
  readonly move: RingMove | null;
}

export function routerOf(spec: RingSpec): ShardRouter {
  return createShardRouter(spec.strategy, spec.shards, spec.virtualNodes);
}

/** Every shard named by the ring or by the ring a move leads to, in first-seen order. */
export function shardsOf(version: Pick<RingVersion, 'spec' | 'move'>): string[] {
  return [...new Set([...version.spec.shards, ...(version.move?.to.shards ?? [])].map((s) => s.name))];
}

const SHARD_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Checks a spec read from the database or built by the tool; the router itself checks names and weights. */
export function checkRingSpec(value: unknown, what = 'ring'): RingSpec {
  const v = value as Partial<RingSpec> | null;
  if (!v || (v.strategy !== 'ring' && v.strategy !== 'jump')) throw new ShardRouterError(`${what}: strategy must be "ring" or "jump"`);
  const virtualNodes = v.virtualNodes ?? DEFAULT_VIRTUAL_NODES;
  if (!Number.isInteger(virtualNodes) || virtualNodes < 1) throw new ShardRouterError(`${what}: virtualNodes must be a positive integer`);
  if (!Array.isArray(v.shards)) throw new ShardRouterError(`${what}: shards must be a list`);
  const shards = v.shards.map((s: ShardNode) => {
    if (!s || typeof s.name !== 'string' || !SHARD_NAME.test(s.name))
      throw new ShardRouterError(`${what}: shard name ${JSON.stringify(s?.name)} must be 1-64 of A-Z a-z 0-9 _ -`);
    return s.weight === undefined || s.weight === 1 ? { name: s.name } : { name: s.name, weight: s.weight };
  });
  const spec: RingSpec = { strategy: v.strategy, virtualNodes, shards };
  routerOf(spec); // throws on an empty list, duplicates, bad weights, weights with jump hash
  return spec;
}

/** Parses the JSON a ring store keeps for one version. */
export function parseRingVersion(version: number, json: string): RingVersion {
  const raw = JSON.parse(json) as { spec?: unknown; move?: { id?: unknown; phase?: unknown; to?: unknown } | null };
  const spec = checkRingSpec(raw.spec, `ring version ${version}`);
  let move: RingMove | null = null;
  if (raw.move) {
    if (typeof raw.move.id !== 'string' || !MOVE_PHASES.includes(raw.move.phase as MovePhase))
      throw new ShardRouterError(`ring version ${version}: malformed move`);
    move = { id: raw.move.id, phase: raw.move.phase as MovePhase, to: checkRingSpec(raw.move.to, `ring version ${version} (move target)`) };
  }
  return { version, spec, move };
}

export function ringVersionJson(v: RingVersion): string {
  return JSON.stringify({ spec: v.spec, move: v.move });
}

/** "ring, 150 vnodes: s0 s1 s2(w2)" for logs and the CLI. */
export function describeSpec(spec: RingSpec): string {
  const shards = spec.shards.map((s) => (s.weight && s.weight !== 1 ? `${s.name}(w${s.weight})` : s.name)).join(' ');
  return spec.strategy === 'jump' ? `jump: ${shards}` : `ring, ${spec.virtualNodes} vnodes: ${shards}`;
}
