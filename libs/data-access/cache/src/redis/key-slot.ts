/** CRC16-CCITT (XMODEM) table, the hash of Redis Cluster's key slots. */
const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

function crc16(bytes: Buffer, start: number, end: number): number {
  let crc = 0;
  for (let i = start; i < end; i++) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ bytes[i]) & 0xff];
  return crc;
}

/**
 * The cluster slot of a key (CLUSTER KEYSLOT): CRC16 of the key, or of its hash tag (the first
 * non-empty `{…}`), mod 16384. Used to group a batch's keys by node (docs/design.md, "Batch creation").
 */
export function keySlot(key: string): number {
  const bytes = Buffer.from(key, 'utf8');
  const open = bytes.indexOf(0x7b);
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) return crc16(bytes, open + 1, close) & 0x3fff;
  }
  return crc16(bytes, 0, bytes.length) & 0x3fff;
}
