import { createHmac, hkdfSync, timingSafeEqual } from 'crypto';
import { CachedLink, DEFAULT_PASSWORD_REMEMBER_HOURS, ShortUrlIdentifier } from '@shortlink/links-domain';

/** Base64url of a SHA-256 MAC: 43 characters. */
const MAC_LENGTH = 43;
/** `<expiry in epoch seconds>.<mac>`. */
const VALUE = /^([1-9]\d{0,11})\.([A-Za-z0-9_-]{43})$/;
/** Characters of the name's hash kept (base64url, 132 bits): two links whose paths nest never share a name. */
const NAME_HASH_LENGTH = 22;

/** Hours a right password of this link is remembered (0: not at all). */
export const rememberHoursOf = (link: CachedLink): number => link.rules?.passwordRememberHours ?? DEFAULT_PASSWORD_REMEMBER_HOURS;

/** A cookie to set: its name, value and lifetime in seconds. */
export interface IssuedPasswordCookie {
  readonly name: string;
  readonly value: string;
  readonly maxAgeSeconds: number;
}

/**
 * The remembered password (docs/design.md, "Link options"): after the right password a visitor gets
 * `<expiry>.<HMAC-SHA256(key, link id, expiry, password hash)>` in a cookie named after the short
 * URL by a keyed hash of its domain and code, never by the link's id, which counts every tenant's
 * links. The MAC binds the link (another link's cookie fails), the expiry (it cannot be stretched) and the
 * argon2id hash, whose salt is new at every change of the password, so a changed password ends
 * every cookie everywhere without any state. A cookie also ends when its owner shortens the
 * lifetime: its expiry may lie at most the link's current lifetime ahead.
 */
export class PasswordCookies {
  private readonly key: Buffer;
  private readonly nameKey: Buffer;

  /** `secret`: the code secret, which every instance shares; the keys are derived for these uses only (HKDF, like the listing's cursors). */
  constructor(secret: string) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'shortlink', 'password-cookie v1', 32));
    this.nameKey = Buffer.from(hkdfSync('sha256', secret, 'shortlink', 'password-cookie-name v1', 32));
  }

  /**
   * One cookie name per short URL, `sl_pw_<22 characters>`: the same on every instance, unrelated
   * between two links (two links on nested paths, `/a` and `/a/b`, keep theirs apart), and telling
   * nothing of how many links exist.
   */
  nameOf(id: ShortUrlIdentifier): string {
    return `sl_pw_${createHmac('sha256', this.nameKey).update(`${id.domain}\n${id.code}`).digest('base64url').slice(0, NAME_HASH_LENGTH)}`;
  }

  /** The cookie for a right password on `id`, or null when the link's owner wants the password at every visit. */
  issue(link: CachedLink, id: ShortUrlIdentifier, nowMs: number): IssuedPasswordCookie | null {
    const hash = link.rules?.passwordHash;
    const hours = rememberHoursOf(link);
    if (hash === undefined || hours <= 0) return null;
    const maxAgeSeconds = hours * 3600;
    const expires = Math.floor(nowMs / 1000) + maxAgeSeconds;
    return { name: this.nameOf(id), value: `${expires}.${this.mac(link.id, expires, hash)}`, maxAgeSeconds };
  }

  /**
   * Whether the request's Cookie header holds a cookie of this link that is well signed, unexpired
   * and made for its current password. A cookie under the name of before (`sl_pw_<link id>`, the
   * same value) is still taken until the last of them has expired (docs/design.md, "Link options").
   */
  accepts(cookieHeader: string | undefined, link: CachedLink, id: ShortUrlIdentifier, nowMs: number): boolean {
    const hash = link.rules?.passwordHash;
    if (cookieHeader === undefined || hash === undefined) return false;
    const hours = rememberHoursOf(link);
    if (hours <= 0) return false;
    const prefix = `${this.nameOf(id)}=`;
    const legacyPrefix = `sl_pw_${link.id}=`;
    for (const part of cookieHeader.split(';')) {
      const pair = part.trim();
      const name = pair.startsWith(prefix) ? prefix : pair.startsWith(legacyPrefix) ? legacyPrefix : null;
      if (name === null) continue;
      const m = VALUE.exec(pair.slice(name.length));
      if (!m) continue;
      const expires = Number(m[1]);
      const nowSeconds = nowMs / 1000;
      if (expires <= nowSeconds || expires > nowSeconds + hours * 3600 + 1) continue;
      const expected = Buffer.from(this.mac(link.id, expires, hash));
      const given = Buffer.from(m[2]);
      if (given.length === MAC_LENGTH && timingSafeEqual(given, expected)) return true;
    }
    return false;
  }

  private mac(linkId: string, expires: number, passwordHash: string): string {
    return createHmac('sha256', this.key).update(`${linkId}\n${expires}\n${passwordHash}`).digest('base64url');
  }
}
