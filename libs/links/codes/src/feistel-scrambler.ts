import { murmur32 } from '@shortlink/shard-router';
import { CODE_SPACE } from './base62';

const ROUNDS = 6;

/**
 * A keyed bijection on [0, 62^7): a balanced Feistel network on 42 bits (2^42 > 62^7) with cycle
 * walking, so consecutive ids map to codes that look unrelated while staying collision-free.
 * Changing the secret changes every future code; it must stay fixed for a deployment.
 */
export class FeistelScrambler {
  private readonly roundKeys: number[];
  private readonly halfMask: number;
  private readonly half: number;

  constructor(
    secret: string,
    private readonly space = CODE_SPACE,
  ) {
    // The network spans the smallest even bit width covering the space, so cycle walking needs
    // fewer than 4 rounds trips on average (62^7 -> 42 bits, 21 per half).
    const halfBits = Math.ceil(Math.ceil(Math.log2(space)) / 2);
    if (halfBits > 26) throw new RangeError('space too large for this Feistel network');
    this.half = 2 ** halfBits;
    this.halfMask = this.half - 1;
    this.roundKeys = Array.from({ length: ROUNDS }, (_, i) => murmur32(secret, i + 1));
  }

  scramble(value: number): number {
    this.assertInSpace(value);
    let x = value;
    do x = this.permute(x, false);
    while (x >= this.space);
    return x;
  }

  unscramble(value: number): number {
    this.assertInSpace(value);
    let x = value;
    do x = this.permute(x, true);
    while (x >= this.space);
    return x;
  }

  private permute(x: number, inverse: boolean): number {
    let left = Math.floor(x / this.half);
    let right = x % this.half;
    if (!inverse) {
      for (let r = 0; r < ROUNDS; r++) [left, right] = [right, (left ^ this.round(right, r)) & this.halfMask];
    } else {
      for (let r = ROUNDS - 1; r >= 0; r--) [left, right] = [(right ^ this.round(left, r)) & this.halfMask, left];
    }
    return left * this.half + right;
  }

  /** Integer mixing (murmur3 finalizer) of a 21-bit half with the round key. */
  private round(half: number, r: number): number {
    let h = (half ^ this.roundKeys[r]) >>> 0;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return (h ^ (h >>> 16)) & this.halfMask;
  }

  private assertInSpace(value: number) {
    if (!Number.isSafeInteger(value) || value < 0 || value >= this.space) {
      throw new RangeError(`${value} is outside [0, ${this.space})`);
    }
  }
}
