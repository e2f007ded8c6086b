import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'crypto';
import { DomainError, ErrorCode } from '@shortlink/core';
import { Link } from './link';
import { ListPosition } from './ports';

/** Newest first: by creation time, then by id (links created in the same millisecond, e.g. a batch chunk). */
export function newestFirst(a: Pick<Link, 'createdAt' | 'id'>, b: Pick<Link, 'createdAt' | 'id'>): number {
  const byTime = b.createdAt.getTime() - a.createdAt.getTime();
  if (byTime !== 0) return byTime;
  const [x, y] = [BigInt(a.id), BigInt(b.id)];
  return x === y ? 0 : y > x ? 1 : -1;
}

/** Whether `link` comes after `position` in the newest-first order. */
export const isAfter = (link: Pick<Link, 'createdAt' | 'id'>, position: ListPosition): boolean => newestFirst(position, link) < 0;

const CURSOR_VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const POSITION_BYTES = 16;
const CURSOR_BYTES = 1 + IV_BYTES + POSITION_BYTES + TAG_BYTES;

const invalidCursor = () =>
  new DomainError(ErrorCode.INVALID_CURSOR, 'cursor is not one this listing gave out (or the filters changed since)', { parameter: 'cursor' });

/**
 * Cursors of the link listing (docs/design.md, "Listing"): the position of the last link
 * shown (creation time and id), sealed with AES-256-GCM under a key derived by HKDF from the code
 * secret, and bound to the tenant and the filters as associated data. A tenant learns nothing from
 * a cursor (not the global id, so not the platform's link count); a cursor that was changed, or
 * that another tenant or another listing gave out, answers 400 INVALID_CURSOR.
 */
export class ListCursors {
  private readonly key: Buffer;

  constructor(secret: string | Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'shortlink', 'list-cursor v1', 32));
  }

  /** A key of this process only: for tests and single-process use (the apps pass the code secret). */
  static ephemeral(): ListCursors {
    return new ListCursors(randomBytes(32));
  }

  seal(tenantId: string, filters: Readonly<Record<string, string>>, position: ListPosition): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(context(tenantId, filters));
    const plain = Buffer.alloc(POSITION_BYTES);
    plain.writeBigInt64BE(BigInt(position.createdAt.getTime()), 0);
    plain.writeBigUInt64BE(BigInt(position.id), 8);
    const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([Buffer.from([CURSOR_VERSION]), iv, sealed, cipher.getAuthTag()]).toString('base64url');
  }

  /** The position a cursor holds; INVALID_CURSOR unless this service sealed it for this tenant and these filters. */
  open(tenantId: string, filters: Readonly<Record<string, string>>, cursor: string): ListPosition {
    const bytes = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url') : Buffer.alloc(0);
    if (bytes.length !== CURSOR_BYTES || bytes[0] !== CURSOR_VERSION) throw invalidCursor();
    const iv = bytes.subarray(1, 1 + IV_BYTES);
    const sealed = bytes.subarray(1 + IV_BYTES, 1 + IV_BYTES + POSITION_BYTES);
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
      decipher.setAAD(context(tenantId, filters));
      decipher.setAuthTag(bytes.subarray(CURSOR_BYTES - TAG_BYTES));
      const plain = Buffer.concat([decipher.update(sealed), decipher.final()]);
      return { createdAt: new Date(Number(plain.readBigInt64BE(0))), id: plain.readBigUInt64BE(8).toString() };
    } catch {
      throw invalidCursor();
    }
  }
}

/** What a cursor is bound to: the tenant and the listing's filters. */
const context = (tenantId: string, filters: Readonly<Record<string, string>>): Buffer => Buffer.from(JSON.stringify([tenantId, filters]), 'utf8');
