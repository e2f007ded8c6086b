import { x64, x86 } from 'murmurhash3js-revisited';
import { murmur32, murmur64, murmur64Halves } from './hash';

const utf8 = (s: string) => new TextEncoder().encode(s);

describe('murmur32 / murmur64', () => {
  it('match the published MurmurHash3 x86_32 vectors', () => {
    expect(murmur32('')).toBe(0);
    expect(murmur32('hello')).toBe(0x248bfa47);
    expect(murmur32('The quick brown fox jumps over the lazy dog')).toBe(0x2e4ff723);
  });

  it('hash the UTF-8 bytes of any key, short (reused scratch) or long (fresh encoding)', () => {
    const keys = ['sho.rt/abc1234', 'é✓😀x', 'a'.repeat(341), 'b'.repeat(342), '😀'.repeat(500), 'x'];
    for (const key of keys) {
      expect(murmur32(key)).toBe(x86.hash32(utf8(key), 0) >>> 0);
      expect(murmur32(key, 7)).toBe(x86.hash32(utf8(key), 7) >>> 0);
      expect(murmur64(key)).toBe(BigInt('0x' + x64.hash128(utf8(key), 0).slice(0, 16)));
    }
  });

  it('does not carry bytes of a longer key over into the next, shorter one', () => {
    const short = murmur32('ab');
    murmur32('a much longer key that fills more of the scratch buffer');
    expect(murmur32('ab')).toBe(short);
  });

  it('equal the library (the values the shards, codes and Bloom bits already hold) on every tail length, seed and script', () => {
    // A small deterministic generator: the same keys on every run.
    let state = 0x2545f491;
    const next = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) >>> 8) / 0x1000000;
    const alphabet = [...'abcXYZ019-_/.é✓😀ß'];
    for (let n = 0; n < 3000; n++) {
      let key = '';
      for (let j = 0; j < n % 67; j++) key += alphabet[Math.floor(next() * alphabet.length)];
      const seed = n % 4 === 0 ? 0 : Math.floor(next() * 2 ** 32);
      const hex = x64.hash128(utf8(key), seed);
      expect(murmur64Halves(key, seed)).toEqual([parseInt(hex.slice(0, 8), 16), parseInt(hex.slice(8, 16), 16)]);
      expect(murmur32(key, seed)).toBe(x86.hash32(utf8(key), seed) >>> 0);
    }
  });

  it('match the published MurmurHash3 x64_128 vector', () => {
    // MurmurHash3_x64_128("The quick brown fox jumps over the lazy dog", 0): bytes 6c1b07bc7bbc4be3 47939ac4a93c437a,
    // so h1 read as a little-endian 64-bit word is 0xe34bbc7bbc071b6c.
    expect(murmur64('The quick brown fox jumps over the lazy dog')).toBe(0xe34bbc7bbc071b6cn);
  });
});
