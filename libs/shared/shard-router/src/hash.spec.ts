import { x64, x86 } from 'murmurhash3js-revisited';
import { murmur32, murmur64 } from './hash';

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
});
