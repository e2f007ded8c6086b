import { CertificateState, DomainEntry, DomainStatus, OwnershipState, TenantDomain, VerifiedBy } from '@shortlink/tenants-domain';
import { toDate } from '@shortlink/sql';

type DbDate = Date | number | string;

/** A row of `tenant_domains` as both SQL backends select it. */
export interface TenantDomainRow {
  domain: string;
  tenant_id: string;
  status: DomainStatus;
  token: string | null;
  created_at: DbDate;
  verified_by: VerifiedBy | null;
  verified_at: DbDate | null;
  checked_at: DbDate | null;
  failures: number | string;
  last_failure: string | null;
  next_check_at: DbDate | null;
  retry_until: DbDate | null;
  cert_expires_at: DbDate | null;
  cert_fingerprint: string | null;
  cert_checked_at: DbDate | null;
  cert_error: string | null;
}

export const TENANT_DOMAIN_COLUMNS =
  'domain, tenant_id, status, token, created_at, verified_by, verified_at, checked_at, failures, last_failure, next_check_at, retry_until, ' +
  'cert_expires_at, cert_fingerprint, cert_checked_at, cert_error';

/** What the redirect's directory reads of every domain. */
export const DOMAIN_ENTRIES_SELECT = 'SELECT domain, tenant_id, status, token FROM tenant_domains ORDER BY domain';
export const domainEntryFromRow = (r: Pick<TenantDomainRow, 'domain' | 'tenant_id' | 'status' | 'token'>): DomainEntry => ({
  domain: r.domain,
  tenantId: r.tenant_id,
  status: r.status,
  token: r.token,
});

const maybeDate = (v: DbDate | null): Date | null => (v === null ? null : toDate(v));

type CertificateRow = Pick<TenantDomainRow, 'cert_expires_at' | 'cert_fingerprint' | 'cert_checked_at' | 'cert_error'>;
const certificateFromRow = (r: CertificateRow): CertificateState | null =>
  r.cert_checked_at === null
    ? null
    : { expiresAt: maybeDate(r.cert_expires_at), fingerprint: r.cert_fingerprint, checkedAt: toDate(r.cert_checked_at), error: r.cert_error };

export function tenantDomainFromRow(r: TenantDomainRow): TenantDomain {
  return {
    ...domainEntryFromRow(r),
    createdAt: toDate(r.created_at),
    verifiedBy: r.verified_by,
    verifiedAt: maybeDate(r.verified_at),
    checkedAt: maybeDate(r.checked_at),
    failures: Number(r.failures),
    lastFailure: r.last_failure,
    nextCheckAt: maybeDate(r.next_check_at),
    retryUntil: maybeDate(r.retry_until),
    certificate: certificateFromRow(r),
  };
}

/** The ownership columns a check writes, and their values in that order (`time` writes a date as the backend keeps it). */
export const OWNERSHIP_SET = 'status = ?, verified_by = ?, verified_at = ?, checked_at = ?, failures = ?, last_failure = ?, next_check_at = ?, retry_until = ?';
export function ownershipValues(s: OwnershipState, time: (d: Date | null) => unknown): unknown[] {
  return [s.status, s.verifiedBy, time(s.verifiedAt), time(s.checkedAt), s.failures, s.lastFailure, time(s.nextCheckAt), time(s.retryUntil)];
}

/** A new domain's row: INSERT_DOMAIN's values. */
export const INSERT_DOMAIN_COLUMNS = `domain, tenant_id, token, created_at, ${OWNERSHIP_SET.replace(/ = \?/g, '')}`;
export const INSERT_DOMAIN_PLACEHOLDERS = Array(12).fill('?').join(', ');
export function insertDomainValues(d: TenantDomain, time: (d: Date | null) => unknown): unknown[] {
  return [d.domain, d.tenantId, d.token, time(d.createdAt), ...ownershipValues(d, time)];
}

export const CERTIFICATE_SET = 'cert_expires_at = ?, cert_fingerprint = ?, cert_checked_at = ?, cert_error = ?';
export function certificateValues(c: CertificateState, time: (d: Date | null) => unknown): unknown[] {
  return [time(c.expiresAt), c.fingerprint, time(c.checkedAt), c.error];
}

/** Due checks: not held, or held past the lease (the lease's end is the stored next_check_at). */
export const DUE_SELECT = `SELECT ${TENANT_DOMAIN_COLUMNS} FROM tenant_domains WHERE next_check_at IS NOT NULL AND next_check_at <= ? ORDER BY next_check_at LIMIT ?`;
/** Takes one due check found by DUE_SELECT if nobody took it since (taking it moves next_check_at to the lease's end, past `now`). */
export const TAKE_DUE = 'UPDATE tenant_domains SET next_check_at = ?, check_holder = ? WHERE domain = ? AND next_check_at <= ?';
/** Takes a tenant's domain now, unless a holder's lease still runs. */
export const TAKE_NOW =
  'UPDATE tenant_domains SET next_check_at = ?, check_holder = ? WHERE domain = ? AND tenant_id = ? AND (check_holder IS NULL OR next_check_at IS NULL OR next_check_at <= ?)';
export const SAVE_CHECK = `UPDATE tenant_domains SET ${OWNERSHIP_SET}, check_holder = NULL WHERE domain = ? AND check_holder = ?`;
export const VERIFIED_CERTIFICATES =
  "SELECT domain, cert_expires_at, cert_fingerprint, cert_checked_at, cert_error FROM tenant_domains WHERE status = 'verified' ORDER BY domain";

export const certificatesFromRows = (rows: Array<CertificateRow & { domain: string }>) =>
  rows.map((r) => ({ domain: r.domain, certificate: certificateFromRow(r) }));
