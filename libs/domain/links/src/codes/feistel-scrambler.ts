import { murmur32 } from '@shortlink/shard-router';
import { CODE_SPACE } from './base62';

const HALF_BITS = 21;
const HALF_MASK = (1 << HALF_BITS) - 1;
const HALF = 2 ** HALF_BITS;
const ROUNDS = 6;

/**
 * A keyed bijection on [0, 62^7): a balanced Feistel network on 42 bits (2^42 > 62^7) with cycle
 * walking, so consecutive ids map to codes that look unrelated while staying collision-free.
 * Changing the secret changes every future code; it must stay fixed for a deployment.
 */
export class FeistelScrambler {
  private readonly roundKeys: number[];

  constructor(secret: string, private readonly space = CODE_SPACE) {
    if (space > 2 ** (2 * HALF_BITS)) throw new RangeError('space too large for a 42-bit Feistel network');
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
    let left = Math.floor(x / HALF);
    let right = x % HALF;
    if (!inverse) {
      for (let r = 0; r < ROUNDS; r++) [left, right] = [right, (left ^ this.round(right, r)) & HALF_MASK];
    } else {
      for (let r = ROUNDS - 1; r >= 0; r--) [left, right] = [(right ^ this.round(left, r)) & HALF_MASK, left];
    }
    return left * HALF + right;
  }

  /** Integer mixing (murmur3 finalizer) of a 21-bit half with the round key. */
  private round(half: number, r: number): number {
    let h = (half ^ this.roundKeys[r]) >>> 0;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return (h ^ (h >>> 16)) & HALF_MASK;
  }

  private assertInSpace(value: number) {
    if (!Number.isSafeInteger(value) || value < 0 || value >= this.space) {
      throw new RangeError(`${value} is outside [0, ${this.space})`);
    }
  }
}
