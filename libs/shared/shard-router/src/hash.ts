/**
 * MurmurHash3 (x86_32 and the first 64 bits of x64_128) over a key's UTF-8 bytes, bit for bit what
 * murmurhash3js-revisited computes (the spec holds them equal on every tail length and on non-ASCII
 * keys): the shard router, the code generator's partitions and the Bloom filter's bits depend on
 * these exact values. Written over 32-bit halves with Math.imul, without the library's per-step
 * arrays, hex strings and per-byte input checks: a 50 000-row batch spent 7 % of its CPU in the
 * library's x64 hash alone (docs/benchmarks.md, "Batch creation").
 */

const encoder = new TextEncoder();
/** Reused for the UTF-8 bytes of short keys: hashing runs per click (partitioning), so no allocation per call. */
const scratch = new Uint8Array(1024);

function utf8(key: string): Uint8Array {
  // A UTF-16 unit takes at most 3 UTF-8 bytes, so a key of up to a third of the scratch always fits.
  if (key.length * 3 > scratch.length) return encoder.encode(key);
  const { written } = encoder.encodeInto(key, scratch);
  return scratch.subarray(0, written);
}

/** 32-bit MurmurHash3 (x86 variant) of the key's UTF-8 bytes, as an unsigned integer. */
export function murmur32(key: string, seed = 0): number {
  return murmur32Bytes(utf8(key), seed);
}

/** 32-bit MurmurHash3 (x86 variant) of bytes, as an unsigned integer. */
export function murmur32Bytes(bytes: Uint8Array, seed = 0): number {
  const length = bytes.length;
  const blocks = length - (length & 3);
  let h = seed | 0;
  let i = 0;
  for (; i < blocks; i += 4) {
    let k = bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24);
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  const tail = length & 3;
  if (tail > 0) {
    let k = bytes[i];
    if (tail > 1) k ^= bytes[i + 1] << 8;
    if (tail > 2) k ^= bytes[i + 2] << 16;
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    h ^= k;
  }
  h ^= length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** First 64 bits of MurmurHash3 x64-128 of the key, as an unsigned bigint. */
export function murmur64(key: string, seed = 0): bigint {
  const [hi, lo] = murmur64Halves(key, seed);
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/** The same 64 bits as two unsigned 32-bit halves (the router's input, no BigInt per lookup). */
export function murmur64Halves(key: string, seed = 0): [hi: number, lo: number] {
  x64First(utf8(key), seed);
  return [outHi >>> 0, outLo >>> 0];
}

/** The first 64 bits of MurmurHash3 x64-128 of bytes as two unsigned 32-bit halves. */
export function murmur64BytesHalves(bytes: Uint8Array, seed = 0): [hi: number, lo: number] {
  x64First(bytes, seed);
  return [outHi >>> 0, outLo >>> 0];
}

/** The result of the 64-bit steps below (a pair of registers, no object per step). */
let outHi = 0;
let outLo = 0;

/** Upper 32 bits of the unsigned 64-bit product of two 32-bit words (16-bit limbs: every partial product is exact in a double). */
function mulHigh(a: number, b: number): number {
  const a0 = a & 0xffff;
  const a1 = a >>> 16;
  const b0 = b & 0xffff;
  const b1 = b >>> 16;
  const t = a1 * b0 + ((a0 * b0) >>> 16);
  const u = a0 * b1 + (t & 0xffff);
  return (a1 * b1 + Math.floor(t / 0x10000) + Math.floor(u / 0x10000)) | 0;
}

/** (ah:al) · (bh:bl) mod 2^64 into outHi:outLo. */
function mul64(ah: number, al: number, bh: number, bl: number): void {
  outHi = (mulHigh(al, bl) + Math.imul(ah, bl) + Math.imul(al, bh)) | 0;
  outLo = Math.imul(al, bl);
}

/** (ah:al) + (bh:bl) mod 2^64 into outHi:outLo. */
function add64(ah: number, al: number, bh: number, bl: number): void {
  const lo = (al >>> 0) + (bl >>> 0);
  outHi = (ah + bh + (lo > 0xffffffff ? 1 : 0)) | 0;
  outLo = lo | 0;
}

/** Rotation left by r (0 < r < 32) into outHi:outLo. */
function rotl64(hi: number, lo: number, r: number): void {
  outHi = (hi << r) | (lo >>> (32 - r));
  outLo = (lo << r) | (hi >>> (32 - r));
}

/** MurmurHash3's final 64-bit mix, into outHi:outLo. */
function fmix64(hi: number, lo: number): void {
  lo ^= hi >>> 1; // h ^= h >>> 33
  mul64(hi, lo, 0xff51afd7 | 0, 0xed558ccd | 0);
  hi = outHi;
  lo = outLo ^ (outHi >>> 1);
  mul64(hi, lo, 0xc4ceb9fe | 0, 0x1a85ec53 | 0);
  outLo ^= outHi >>> 1;
}

const C1_HI = 0x87c37b91 | 0;
const C1_LO = 0x114253d5;
const C2_HI = 0x4cf5ad43;
const C2_LO = 0x2745937f;

/** k1 · c1, rotl 31, · c2 (the first lane's block mix) into outHi:outLo. */
function mixK1(hi: number, lo: number): void {
  mul64(hi, lo, C1_HI, C1_LO);
  rotl64(outHi, outLo, 31);
  mul64(outHi, outLo, C2_HI, C2_LO);
}

/** k2 · c2, rotl 33, · c1 (the second lane's block mix) into outHi:outLo. */
function mixK2(hi: number, lo: number): void {
  mul64(hi, lo, C2_HI, C2_LO);
  rotl64(outLo, outHi, 1); // rotl 33 = swap the halves, then rotl 1
  mul64(outHi, outLo, C1_HI, C1_LO);
}

const word = (b: Uint8Array, i: number) => b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24);

/** h1 of MurmurHash3 x64-128 (the first 64 bits of its output) into outHi:outLo. */
function x64First(bytes: Uint8Array, seed: number): void {
  const length = bytes.length;
  const blocks = length - (length & 15);
  let h1h = 0;
  let h1l = seed | 0;
  let h2h = 0;
  let h2l = seed | 0;
  let i = 0;
  for (; i < blocks; i += 16) {
    mixK1(word(bytes, i + 4), word(bytes, i));
    h1h ^= outHi;
    h1l ^= outLo;
    rotl64(h1h, h1l, 27);
    add64(outHi, outLo, h2h, h2l);
    mul64(outHi, outLo, 0, 5);
    add64(outHi, outLo, 0, 0x52dce729);
    h1h = outHi;
    h1l = outLo;

    mixK2(word(bytes, i + 12), word(bytes, i + 8));
    h2h ^= outHi;
    h2l ^= outLo;
    rotl64(h2h, h2l, 31);
    add64(outHi, outLo, h1h, h1l);
    mul64(outHi, outLo, 0, 5);
    add64(outHi, outLo, 0, 0x38495ab5);
    h2h = outHi;
    h2l = outLo;
  }
  const tail = length & 15;
  if (tail > 8) {
    // Bytes 8..15 of the last block, little-endian, into k2.
    let kh = 0;
    let kl = 0;
    for (let j = tail - 1; j >= 8; j--) {
      if (j >= 12) kh |= bytes[i + j] << ((j - 12) * 8);
      else kl |= bytes[i + j] << ((j - 8) * 8);
    }
    mixK2(kh, kl);
    h2h ^= outHi;
    h2l ^= outLo;
  }
  if (tail > 0) {
    let kh = 0;
    let kl = 0;
    for (let j = Math.min(tail, 8) - 1; j >= 0; j--) {
      if (j >= 4) kh |= bytes[i + j] << ((j - 4) * 8);
      else kl |= bytes[i + j] << (j * 8);
    }
    mixK1(kh, kl);
    h1h ^= outHi;
    h1l ^= outLo;
  }
  h1l ^= length;
  h2l ^= length;
  add64(h1h, h1l, h2h, h2l);
  h1h = outHi;
  h1l = outLo;
  add64(h2h, h2l, h1h, h1l);
  h2h = outHi;
  h2l = outLo;
  fmix64(h1h, h1l);
  h1h = outHi;
  h1l = outLo;
  fmix64(h2h, h2l);
  // h1 + h2 is the first half of the output (h2 + h1 again, the second, is not needed).
  add64(h1h, h1l, outHi, outLo);
}
