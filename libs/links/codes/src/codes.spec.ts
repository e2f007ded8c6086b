import { CODE_SPACE, decodeBase62, encodeBase62 } from './base62';
import { FeistelScrambler } from './feistel-scrambler';
import { HashCodeStrategy, SequenceCodeStrategy } from './code-generator';

describe('Base62', () => {
  it('encodes fixed-length, left-padded, and decodes back', () => {
    expect(encodeBase62(0)).toBe('0000000');
    expect(encodeBase62(12345, 3)).toBe('3d7');
    expect(encodeBase62(CODE_SPACE - 1)).toBe('ZZZZZZZ');
    for (const n of [1, 61, 62, 3_521_614_606_207, 987_654_321]) expect(decodeBase62(encodeBase62(n))).toBe(n);
    expect(() => encodeBase62(CODE_SPACE)).toThrow(RangeError);
    expect(() => encodeBase62(-1)).toThrow(RangeError);
  });
});

describe('FeistelScrambler', () => {
  it('is a bijection: on a small space every value maps to a distinct value and back', () => {
    const space = 62 ** 3;
    const s = new FeistelScrambler('secret', space);
    const seen = new Set<number>();
    let outside = 0;
    let notInverted = 0;
    for (let i = 0; i < space; i++) {
      const x = s.scramble(i);
      if (x >= space) outside++;
      seen.add(x);
      if (i % 997 === 0 && s.unscramble(x) !== i) notInverted++;
    }
    expect({ outside, notInverted, distinct: seen.size }).toEqual({ outside: 0, notInverted: 0, distinct: space });
  });

  it('round-trips on the full 7-character space and depends on the secret', () => {
    const a = new FeistelScrambler('secret-a');
    const b = new FeistelScrambler('secret-b');
    for (const id of [1, 2, 3, 1000, 1001, 123_456_789, CODE_SPACE - 1]) {
      expect(a.unscramble(a.scramble(id))).toBe(id);
      expect(a.scramble(id)).not.toBe(b.scramble(id));
    }
  });
});

describe('SequenceCodeStrategy', () => {
  it('gives 7-char codes, distinct for 100 000 consecutive ids, that do not share prefixes like a counter', () => {
    const s = new SequenceCodeStrategy('secret');
    const codes = Array.from({ length: 100_000 }, (_, i) => s.codeFor(BigInt(i + 1), '', 0));
    expect(new Set(codes).size).toBe(codes.length);
    expect(codes.every((c) => /^[0-9a-zA-Z]{7}$/.test(c))).toBe(true);
    // Neighbouring ids: a counter would share the first 6 characters almost always.
    const samePrefix = codes.slice(1).filter((c, i) => c.slice(0, 4) === codes[i].slice(0, 4)).length;
    expect(samePrefix / codes.length).toBeLessThan(0.01);
  });
});

describe('HashCodeStrategy', () => {
  it('is deterministic per URL and changes with the attempt number', () => {
    const h = new HashCodeStrategy();
    expect(h.codeFor(0n, 'https://a.example', 0)).toBe(h.codeFor(9n, 'https://a.example', 0));
    expect(h.codeFor(0n, 'https://a.example', 1)).not.toBe(h.codeFor(0n, 'https://a.example', 0));
    expect(h.codeFor(0n, 'https://a.example', 0)).toMatch(/^[0-9a-zA-Z]{7}$/);
  });
});
