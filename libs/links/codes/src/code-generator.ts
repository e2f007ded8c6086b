import { x64 } from 'murmurhash3js-revisited';
import { CODE_LENGTH, CODE_SPACE, encodeBase62 } from './base62';
import { FeistelScrambler } from './feistel-scrambler';

/** Turns a link id into its code: a scrambled fixed-length Base62 string. */
export class SequenceCodeStrategy {
  readonly name = 'sequence';
  private readonly scrambler: FeistelScrambler;

  constructor(secret: string) {
    this.scrambler = new FeistelScrambler(secret);
  }

  codeFor(id: bigint, _url: string, _attempt: number): string {
    // Ids beyond the 7-char space would need longer codes; 3.5e12 ids is far beyond our volume.
    if (id >= BigInt(CODE_SPACE)) throw new RangeError(`id ${id} exceeds the 7-character code space`);
    return encodeBase62(this.scrambler.scramble(Number(id)));
  }
}

/**
 * The system-design article's alternative (docs/design.md, "Identity, shards and codes"): MurmurHash3-128 of the URL (plus the attempt
 * number after a collision), reduced into the 7-char space. The same URL gives the same first code.
 */
export class HashCodeStrategy {
  readonly name = 'hash';
  private readonly encoder = new TextEncoder();

  codeFor(_id: bigint, url: string, attempt: number): string {
    const seedText = attempt === 0 ? url : `${url}${attempt}`;
    const hex = x64.hash128(this.encoder.encode(seedText));
    const value = Number(BigInt('0x' + hex.slice(0, 12)) % BigInt(CODE_SPACE));
    return encodeBase62(value, CODE_LENGTH);
  }
}

export type CodeStrategy = SequenceCodeStrategy | HashCodeStrategy;
