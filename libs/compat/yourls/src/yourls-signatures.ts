import { createHash, createHmac, getHashes, hkdfSync, timingSafeEqual } from 'crypto';

/** A key as YOURLS credentials name it: its tenant and its id. */
export interface YourlsUser {
  readonly tenantId: string;
  readonly keyId: string;
}

/** How far a time-limited signature's `timestamp` may be from the server's clock (YOURLS: 12 hours; here ±15 minutes). */
export const TIMESTAMP_SKEW_SECONDS = 15 * 60;
/** The `hash` functions a time-limited signature may use (YOURLS 1.7.10+ takes any of PHP's; md5 is its default). */
export const SIGNATURE_HASHES = ['md5', 'sha1', 'sha256', 'sha512'] as const;
const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MAC_LENGTH = 22;

/**
 * YOURLS' signature credentials mapped onto our API keys (docs/design.md, "Compatibility APIs").
 * A key's YOURLS user is `<tenant id>.<key id>`; its signature token is that user followed by a MAC
 * of it (HMAC-SHA256 under a key derived from the code secret), so the server finds the key without
 * storing anything and every instance checks every token. The token is the key's own credential:
 * revoking the key ends it. A time-limited signature is `hash(timestamp . token)` (or the reverse
 * order, as YOURLS accepts) with `timestamp` within ±15 minutes; it does not carry the user, so
 * the request names it in `username`.
 */
export class YourlsSignatures {
  private readonly key: Buffer;

  constructor(codeSecret: string) {
    this.key = Buffer.from(hkdfSync('sha256', codeSecret, 'shortlink', 'yourls-signature v1', 32));
  }

  /** The YOURLS username of a key. */
  static usernameOf(user: YourlsUser): string {
    return `${user.tenantId}.${user.keyId}`;
  }

  /** The key a YOURLS username names, or null when it is not one. */
  static userOf(username: unknown): YourlsUser | null {
    if (typeof username !== 'string') return null;
    const [tenantId, keyId, more] = username.split('.');
    return more === undefined && tenantId && keyId && ID.test(tenantId) && ID.test(keyId) ? { tenantId, keyId } : null;
  }

  /** The signature token of a key (what YOURLS' admin page shows as "your secret signature token"). */
  tokenOf(user: YourlsUser): string {
    const username = YourlsSignatures.usernameOf(user);
    return `${username}.${this.mac(username)}`;
  }

  /** The key a plain `signature` names, or null when it is not a token this server issued. */
  verify(signature: unknown): YourlsUser | null {
    if (typeof signature !== 'string' || signature.length > 200) return null;
    const at = signature.lastIndexOf('.');
    if (at < 0) return null;
    const user = YourlsSignatures.userOf(signature.slice(0, at));
    if (!user) return null;
    return equal(signature.slice(at + 1), this.mac(signature.slice(0, at))) ? user : null;
  }

  /**
   * The key of a time-limited signature: `signature` = hash(timestamp . token) or hash(token .
   * timestamp) in hex, hash one of SIGNATURE_HASHES (default md5), `timestamp` in epoch seconds
   * within the skew of `nowMs`. 'expired' when the timestamp is too far; null when it does not match.
   */
  verifyTimed(
    input: { username: unknown; timestamp: unknown; signature: unknown; hash?: unknown },
    nowMs: number,
  ): YourlsUser | 'expired' | 'unknown-hash' | null {
    const user = YourlsSignatures.userOf(input.username);
    const { timestamp, signature } = input;
    if (!user || typeof timestamp !== 'string' || !/^\d{1,12}$/.test(timestamp) || typeof signature !== 'string' || !/^[0-9a-fA-F]{32,128}$/.test(signature))
      return null;
    const algorithm = input.hash === undefined || input.hash === '' ? 'md5' : input.hash;
    if (
      typeof algorithm !== 'string' ||
      !(SIGNATURE_HASHES as readonly string[]).includes(algorithm.toLowerCase()) ||
      !getHashes().includes(algorithm.toLowerCase())
    )
      return 'unknown-hash';
    if (Math.abs(Number(timestamp) - nowMs / 1000) > TIMESTAMP_SKEW_SECONDS) return 'expired';
    const token = this.tokenOf(user);
    const given = signature.toLowerCase();
    const digest = (text: string) => createHash(algorithm.toLowerCase()).update(text, 'utf8').digest('hex');
    return equal(given, digest(timestamp + token)) || equal(given, digest(token + timestamp)) ? user : null;
  }

  private mac(username: string): string {
    return createHmac('sha256', this.key).update(username, 'utf8').digest('base64url').slice(0, MAC_LENGTH);
  }
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}
