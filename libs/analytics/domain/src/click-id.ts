import { Cipheriv, createCipheriv, createDecipheriv, Decipheriv, hkdfSync, randomFillSync } from 'crypto';

/** How long a click id may be reported in a lead unless configured otherwise (docs/analytics.md, "Conversions"). */
export const DEFAULT_CLICK_ID_TTL_DAYS = 90;

/** What a click id says once opened: the link clicked and the minute of the click. */
export interface OpenedClickId {
  readonly linkId: string;
  /** Epoch ms of the click, to the minute. */
  readonly issuedAt: number;
}

/** 22 characters of base64url: one AES block. */
const CLICK_ID = /^[A-Za-z0-9_-]{22}$/;
const MAX_LINK_ID = 2 ** 48 - 1;
const MINUTE_MS = 60_000;
const POOL_BYTES = 4096;

/**
 * The click id of a link with conversion tracking (docs/design.md, "Conversions"): one AES-128 block,
 * base64url (22 characters), of `link id (48 bits) ‖ minute of the click (32 bits) ‖ 32 random bits ‖
 * 16 zero bits`, under a key derived from the code secret that every instance shares. It is made in
 * the redirect's process (no I/O: one block through a cipher kept open, random
 * bits from a pool) and opened by the generation app, which needs no store of clicks: the id names
 * its link and its age. Nobody without the key can read the link id in it (which would count every
 * tenant's links) or make an id that opens (the zero bits, then a link of the caller's own, then an
 * age within the expiry); the random bits tell two clicks of one minute apart. No personal data.
 */
export class ClickIds {
  private readonly encrypt: Cipheriv;
  private readonly decrypt: Decipheriv;
  private readonly block = Buffer.alloc(16);
  private readonly pool = Buffer.allocUnsafe(POOL_BYTES);
  private poolAt = POOL_BYTES;

  /** `secret`: the code secret; the key is derived for this use only (HKDF, like the password cookies'). */
  constructor(secret: string) {
    const key = Buffer.from(hkdfSync('sha256', secret, 'shortlink', 'click-id v1', 16));
    // ECB over exactly one block at a time, never finished: the objects are kept and reused.
    this.encrypt = createCipheriv('aes-128-ecb', key, null).setAutoPadding(false);
    this.decrypt = createDecipheriv('aes-128-ecb', key, null).setAutoPadding(false);
  }

  /** A new click id of a click on `linkId` (a decimal id) at `now`; null for an id beyond 48 bits (none is). */
  issue(linkId: string, now: number): string | null {
    const id = Number(linkId);
    if (!Number.isSafeInteger(id) || id < 0 || id > MAX_LINK_ID) return null;
    const b = this.block;
    b.writeUIntBE(id, 0, 6);
    b.writeUInt32BE(Math.floor(now / MINUTE_MS) >>> 0, 6);
    if (this.poolAt + 4 > POOL_BYTES) {
      randomFillSync(this.pool);
      this.poolAt = 0;
    }
    this.pool.copy(b, 10, this.poolAt, this.poolAt + 4);
    this.poolAt += 4;
    b[14] = 0;
    b[15] = 0;
    return this.encrypt.update(b).toString('base64url');
  }

  /** What a click id says, or null when it is not one of ours (malformed, another key, tampered). */
  open(clickId: unknown): OpenedClickId | null {
    if (typeof clickId !== 'string' || !CLICK_ID.test(clickId)) return null;
    const raw = Buffer.from(clickId, 'base64url');
    if (raw.length !== 16) return null;
    const b = this.decrypt.update(raw);
    if (b.length !== 16 || b[14] !== 0 || b[15] !== 0) return null;
    return { linkId: String(b.readUIntBE(0, 6)), issuedAt: b.readUInt32BE(6) * MINUTE_MS };
  }
}

/**
 * `location` with `name=value` added to its query (before a fragment), as the redirect passes a
 * click id to the target. `value` is base64url and `name` a checked parameter name: nothing to escape.
 */
export function withQueryParam(location: string, name: string, value: string): string {
  const hash = location.indexOf('#');
  const base = hash < 0 ? location : location.slice(0, hash);
  const fragment = hash < 0 ? '' : location.slice(hash);
  const separator = base.includes('?') ? (base.endsWith('?') || base.endsWith('&') ? '' : '&') : '?';
  return `${base}${separator}${name}=${value}${fragment}`;
}
