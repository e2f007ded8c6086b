import { x64, x86 } from 'murmurhash3js-revisited';

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
  return x86.hash32(utf8(key), seed) >>> 0;
}

/** First 64 bits of MurmurHash3 x64-128 of the key, as an unsigned bigint. */
export function murmur64(key: string, seed = 0): bigint {
  return BigInt('0x' + x64.hash128(utf8(key), seed).slice(0, 16));
}

/** The same 64 bits as two unsigned 32-bit halves (the router's input, no BigInt per lookup). */
export function murmur64Halves(key: string, seed = 0): [hi: number, lo: number] {
  const hex = x64.hash128(utf8(key), seed);
  return [parseInt(hex.slice(0, 8), 16), parseInt(hex.slice(8, 16), 16)];
}
