import { randomBytes } from 'crypto';
import { ConsistentHashRing } from './consistent-hash-ring';
import { JumpHashRouter, jumpConsistentHash } from './jump-hash';
import { planRebalance } from './rebalance-planner';
import { ShardRouter, ShardRouterError } from './shard-router';

const BASE62 = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

function randomCodes(count: number, length = 7): string[] {
  const bytes = randomBytes(count * length);
  const codes = new Array<string>(count);
  for (let i = 0; i < count; i++) {
    let code = '';
    for (let j = 0; j < length; j++) code += BASE62[bytes[i * length + j] % 62];
    codes[i] = code;
  }
  return codes;
}

const shardNames = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `shard-${i}` }));
/** 200 000 keys: the sampling error of a share (~0.2 %) stays far below every tolerance asserted here. */
const CODES = randomCodes(200_000);

/**
 * The owner of each of CODES under a router, computed once per router: routers are pure functions of their shards, and
 * 200 000 lookups (murmur in JavaScript, slower still in jest's sandbox) are what this spec costs.
 */
const ownersOf = (() => {
  const known = new WeakMap<ShardRouter, readonly string[]>();
  return (router: ShardRouter) =>
    known.get(router) ??
    known
      .set(
        router,
        CODES.map((c) => router.shardFor(c)),
      )
      .get(router)!;
})();
const indexOfCode = new Map(CODES.map((c, i) => [c, i]));
/** The same router for planRebalance, answering CODES from ownersOf (planRebalance still asks it key by key). */
const remembered = (router: ShardRouter): ShardRouter => ({
  strategy: router.strategy,
  shards: () => router.shards(),
  withShard: (node) => router.withShard(node),
  withoutShard: (name) => router.withoutShard(name),
  shardFor: (key) => ownersOf(router)[indexOfCode.get(key)!],
});

function shares(router: ShardRouter): Map<string, number> {
  const counts = new Map<string, number>(router.shards().map((s) => [s, 0]));
  for (const shard of ownersOf(router)) counts.set(shard, (counts.get(shard) ?? 0) + 1);
  return counts;
}

function expectBalanced(router: ShardRouter) {
  const counts = shares(router);
  const mean = CODES.length / router.shards().length;
  for (const [, count] of counts) {
    expect(Math.abs(count - mean) / mean).toBeLessThanOrEqual(0.1);
  }
}

describe.each([
  ['consistent hash ring, 150 virtual nodes', (n: number) => new ConsistentHashRing(shardNames(n))],
  ['jump consistent hash', (n: number) => new JumpHashRouter(shardNames(n))],
])('%s', (_name, build) => {
  const ten = build(10);

  it('spreads 200 000 random 7-char codes over 10 shards within ±10 % of the mean', () => {
    expectBalanced(ten);
  });

  it('moves about 1/11 of the keys when an 11th shard joins, all of them to the new shard', () => {
    const after = ten.withShard({ name: 'shard-10' });
    const plan = planRebalance(remembered(ten), after, CODES);
    expect(Math.abs(plan.movedFraction - 1 / 11)).toBeLessThanOrEqual(0.01);
    expect(plan.moves.filter((m) => m.to !== 'shard-10')).toEqual([]);
  });

  it('moves only the keys of a shard that leaves', () => {
    const leaving = ten instanceof JumpHashRouter ? 'shard-9' : 'shard-3';
    const after = ten.withoutShard(leaving);
    const plan = planRebalance(remembered(ten), after, CODES);
    const owned = ownersOf(ten).filter((s) => s === leaving).length;
    expect(owned).toBeGreaterThan(CODES.length / 20); // about a tenth
    expect(plan.moves.length).toBe(owned);
    expect(plan.moves.filter((m) => m.from !== leaving || m.to === leaving)).toEqual([]);
  });

  it('is deterministic: a router built again from the same shards routes every key the same way', () => {
    const a = build(4);
    const b = build(4);
    expect(CODES.slice(0, 10_000).every((c) => a.shardFor(c) === b.shardFor(c))).toBe(true);
  });
});

describe('ConsistentHashRing', () => {
  it('does not depend on the order in which shards are listed', () => {
    const a = new ConsistentHashRing(shardNames(5));
    const b = new ConsistentHashRing([...shardNames(5)].reverse());
    expect(CODES.slice(0, 20_000).every((c) => a.shardFor(c) === b.shardFor(c))).toBe(true);
  });

  it('gives a weight-2 shard about twice the keys of a weight-1 shard', () => {
    const ring = new ConsistentHashRing([{ name: 'small' }, { name: 'big', weight: 2 }, { name: 'other' }]);
    const counts = shares(ring);
    const ratio = counts.get('big')! / ((counts.get('small')! + counts.get('other')!) / 2);
    expect(ratio).toBeGreaterThan(1.7);
    expect(ratio).toBeLessThan(2.3);
  });

  it('places virtualNodes × shards points on the ring', () => {
    expect(new ConsistentHashRing(shardNames(10)).size).toBe(1500);
    expect(new ConsistentHashRing(shardNames(3), { virtualNodes: 10 }).size).toBe(30);
  });

  it('rejects empty, duplicate and badly weighted shard lists', () => {
    expect(() => new ConsistentHashRing([])).toThrow(ShardRouterError);
    expect(() => new ConsistentHashRing([{ name: 'a' }, { name: 'a' }])).toThrow(/listed twice/);
    expect(() => new ConsistentHashRing([{ name: 'a', weight: 0 }])).toThrow(/weight/);
    expect(() => new ConsistentHashRing(shardNames(2)).withoutShard('nope')).toThrow(/not on the ring/);
  });
});

/** The paper's function, straight on BigInt: the oracle for the 32-bit-halves implementation. */
function referenceJump(key: bigint, buckets: number): number {
  const MASK64 = (1n << 64n) - 1n;
  let k = key & MASK64;
  let b = -1;
  let j = 0;
  while (j < buckets) {
    b = j;
    k = (k * 2862933555777941757n + 1n) & MASK64;
    j = Math.floor((b + 1) * (2147483648 / (Number(k >> 33n) + 1)));
  }
  return b;
}

describe('jumpConsistentHash', () => {
  it('agrees with the BigInt reference on 20 000 random keys and bucket counts', () => {
    const bytes = randomBytes(20_000 * 8);
    for (let i = 0; i < 20_000; i++) {
      const key = bytes.readBigUInt64BE(i * 8);
      const buckets = 1 + ((bytes[i * 8] * 7 + bytes[i * 8 + 1]) % 2048);
      if (jumpConsistentHash(key, buckets) !== referenceJump(key, buckets))
        throw new Error(`key ${key} buckets ${buckets}: ${jumpConsistentHash(key, buckets)} != ${referenceJump(key, buckets)}`);
    }
    expect(jumpConsistentHash(0xffffffffffffffffn, 1 << 20)).toBe(referenceJump(0xffffffffffffffffn, 1 << 20));
  });

  it('matches the reference implementation for known keys', () => {
    // Expected values printed by the paper's C++ function compiled with g++ on this machine.
    expect(jumpConsistentHash(0n, 1)).toBe(0);
    expect(jumpConsistentHash(1n, 10)).toBe(6);
    expect(jumpConsistentHash(2n, 10)).toBe(6);
    expect(jumpConsistentHash(256n, 1024)).toBe(520);
    expect(jumpConsistentHash(0xdeadbeefn, 100)).toBe(87);
    expect(jumpConsistentHash(0xffffffffffffffffn, 1_000_000)).toBe(589430);
  });

  it('refuses to remove any but the last shard and refuses weights', () => {
    expect(() => new JumpHashRouter(shardNames(3)).withoutShard('shard-0')).toThrow(/only remove its last/);
    expect(() => new JumpHashRouter([{ name: 'a', weight: 2 }])).toThrow(/weight/);
  });
});
