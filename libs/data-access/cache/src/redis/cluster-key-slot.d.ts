/** The package ioredis itself uses for CLUSTER KEYSLOT (CRC16 of the key or its hash tag); it ships no types. */
declare module 'cluster-key-slot' {
  export default function calculateSlot(key: string | Buffer): number;
}
