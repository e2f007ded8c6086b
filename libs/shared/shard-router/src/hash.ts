import { x64, x86 } from 'murmurhash3js-revisited';

const encoder = new TextEncoder();

/** 32-bit MurmurHash3 (x86 variant) of the key's UTF-8 bytes, as an unsigned integer. */
export function murmur32(key: string, seed = 0): number {
  return x86.hash32(encoder.encode(key), seed) >>> 0;
}

/** First 64 bits of MurmurHash3 x64-128 of the key, as an unsigned bigint (input of jump hash). */
export function murmur64(key: string, seed = 0): bigint {
  return BigInt('0x' + x64.hash128(encoder.encode(key), seed).slice(0, 16));
}
