import { murmur64Halves } from './hash';
import { assertValidNodes, ShardNode, ShardRouter, ShardRouterError } from './shard-router';

const TWO_POW_31 = 2147483648;
/** The LCG multiplier 2862933555777941757 as 32-bit halves. */
const MULTIPLIER_HI = 0x27bb2ee6;
const MULTIPLIER_LO = 0x87b0b0fd;

/** High 32 bits of the 64-bit product of two unsigned 32-bit integers (exact in doubles). */
function mulHigh32(a: number, b: number): number {
  const a0 = a & 0xffff;
  const a1 = a >>> 16;
  const b0 = b & 0xffff;
  const b1 = b >>> 16;
  const t = a1 * b0 + ((a0 * b0) >>> 16);
  const w1 = (t & 0xffff) + a0 * b1;
  return (a1 * b1 + Math.floor(t / 65536) + Math.floor(w1 / 65536)) >>> 0;
}

/**
 * Google's Jump Consistent Hash (Lamping & Veach 2014) over a 64-bit key given as unsigned 32-bit
 * halves: the 64-bit LCG step is done on the halves, so a lookup allocates no BigInt.
 */
export function jumpBucket(hi: number, lo: number, buckets: number): number {
  if (!Number.isInteger(buckets) || buckets < 1) throw new ShardRouterError(`buckets must be a positive integer, got ${buckets}`);
  let kh = hi >>> 0;
  let kl = lo >>> 0;
  let b = -1;
  let j = 0;
  while (j < buckets) {
    b = j;
    // k = k * MULTIPLIER + 1 (mod 2^64)
    const lowProduct = Math.imul(kl, MULTIPLIER_LO) >>> 0;
    let nextHi = (mulHigh32(kl, MULTIPLIER_LO) + Math.imul(kh, MULTIPLIER_LO) + Math.imul(kl, MULTIPLIER_HI)) >>> 0;
    const nextLo = (lowProduct + 1) >>> 0;
    if (nextLo === 0) nextHi = (nextHi + 1) >>> 0;
    kh = nextHi;
    kl = nextLo;
    j = Math.floor((b + 1) * (TWO_POW_31 / ((kh >>> 1) + 1)));
  }
  return b;
}

/** Jump hash of a 64-bit key given as a bigint (reference form of the paper's signature). */
export function jumpConsistentHash(key: bigint, buckets: number): number {
  const k = BigInt.asUintN(64, key);
  return jumpBucket(Number(k >> 32n), Number(k & 0xffffffffn), buckets);
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
    const [hi, lo] = murmur64Halves(key);
    return this.names[jumpBucket(hi, lo, this.names.length)];
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
