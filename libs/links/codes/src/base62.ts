export const BASE62_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
export const CODE_LENGTH = 7;
/** 62^7 = 3 521 614 606 208 codes: the whole space of fixed-length generated codes. */
export const CODE_SPACE = 62 ** CODE_LENGTH;

/** Fixed-length Base62 (left-padded with '0') of a non-negative safe integer below 62^length. */
export function encodeBase62(value: number, length = CODE_LENGTH): string {
  if (!Number.isSafeInteger(value) || value < 0 || value >= 62 ** length) {
    throw new RangeError(`${value} does not fit in ${length} Base62 characters`);
  }
  const chars = new Array<string>(length);
  let v = value;
  for (let i = length - 1; i >= 0; i--) {
    chars[i] = BASE62_ALPHABET[v % 62];
    v = Math.floor(v / 62);
  }
  return chars.join('');
}

export function decodeBase62(code: string): number {
  let value = 0;
  for (const ch of code) {
    const digit = BASE62_ALPHABET.indexOf(ch);
    if (digit < 0) throw new RangeError(`"${ch}" is not a Base62 character`);
    value = value * 62 + digit;
  }
  return value;
}
