declare module 'murmurhash3js-revisited' {
  export const x86: { hash32(bytes: Uint8Array, seed?: number): number; hash128(bytes: Uint8Array, seed?: number): string };
  export const x64: { hash128(bytes: Uint8Array, seed?: number): string };
}
