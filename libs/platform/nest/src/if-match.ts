import { DomainError, ErrorCode } from '@shortlink/core';

/** If-Match: `"3"` (our ETag), `W/"3"` or `3`; `*` or none: any version. */
export function versionOf(ifMatch: string | undefined): number | null {
  if (ifMatch === undefined || ifMatch.trim() === '*') return null;
  const m = /^\s*(?:W\/)?"?(\d{1,9})"?\s*$/.exec(ifMatch);
  if (!m) throw new DomainError(ErrorCode.VALIDATION_FAILED, 'If-Match must be an ETag this API gave out, e.g. "3"', { header: 'if-match' });
  return Number(m[1]);
}
