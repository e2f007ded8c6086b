import { randomBytes } from 'crypto';
import type { AuditEntry } from '@shortlink/audit-domain';

/**
 * A tenant's own domain and what proves it is the tenant's (docs/design.md, "Custom domains and
 * TLS"). `pending`: added, never proven; `verified`: proven (serves links, may get a certificate);
 * `unverified`: was proven, then a re-check found the proof gone. Only a verified domain serves
 * anything, carries links or gets a certificate.
 */
export type DomainStatus = 'pending' | 'verified' | 'unverified';
export const DOMAIN_STATUSES: readonly DomainStatus[] = ['pending', 'verified', 'unverified'];

/** How ownership is proven: a DNS TXT record, or the token served over HTTP on the domain itself. */
export type OwnershipMethod = 'dns' | 'http';
export const OWNERSHIP_METHODS: readonly OwnershipMethod[] = ['dns', 'http'];
/** What proved a domain: one of the methods, or an operator who assigned it (never checked again). */
export type VerifiedBy = OwnershipMethod | 'operator';

/** What the redirect holds of every tenant domain: whose it is, whether it serves, its HTTP token. */
export interface DomainEntry {
  readonly domain: string;
  readonly tenantId: string;
  readonly status: DomainStatus;
  /** What proves it (the TXT value, the HTTP answer); null for a domain an operator gave (nothing to prove). */
  readonly token: string | null;
}

/** The certificate the TLS front served for a domain when last read (null fields: none could be read). */
export interface CertificateState {
  readonly expiresAt: Date | null;
  /** SHA-256 of the certificate: a new one means one was issued (or renewed). */
  readonly fingerprint: string | null;
  readonly checkedAt: Date;
  readonly error: string | null;
}

/** Where a domain stands in its checks (the columns the verifier writes). */
export interface OwnershipState {
  readonly status: DomainStatus;
  readonly verifiedBy: VerifiedBy | null;
  /** When it was last proven (the operator's assignment counts). */
  readonly verifiedAt: Date | null;
  readonly checkedAt: Date | null;
  /** Consecutive failed checks: the backoff's step, and for a verified domain what unverifies it. */
  readonly failures: number;
  readonly lastFailure: string | null;
  /** When the next automatic check is due; null: none (an operator's domain, or retries over). */
  readonly nextCheckAt: Date | null;
  /** Until when a pending or unverified domain is retried automatically (a check asked for starts it again). */
  readonly retryUntil: Date | null;
}

export interface TenantDomain extends DomainEntry, OwnershipState {
  readonly createdAt: Date;
  readonly certificate: CertificateState | null;
}

/** The TXT record that proves a domain: its name and its value. */
export const txtRecordName = (domain: string) => `_shortlink-challenge.${domain}`;
export const txtRecordValue = (token: string) => `shortlink-verification=${token}`;
/** The path the redirect serves the token on, for the HTTP method. */
export const CHALLENGE_PATH_PREFIX = '/.well-known/shortlink-challenge/';
export const challengePath = (token: string) => `${CHALLENGE_PATH_PREFIX}${token}`;

/** A domain's token: 32 characters of base64url, 192 random bits (public once published, never reused). */
export const newDomainToken = (): string => randomBytes(24).toString('base64url');

/** A probe could not tell (no answer from the resolver, no connection): `conclusive` false; else it answered no. */
export class ProbeFailure extends Error {
  constructor(
    message: string,
    readonly conclusive: boolean,
  ) {
    super(message);
    this.name = 'ProbeFailure';
  }
}

/** A certificate as the TLS front served it. */
export interface ServedCertificate {
  readonly expiresAt: Date;
  readonly fingerprint: string;
}

/**
 * The network side of the checks (data-access): DNS through the system resolver or a configured one,
 * HTTP to the address the domain resolves to, TLS to the front that terminates the domains.
 */
export interface DomainProbes {
  /** The TXT strings at `name` (a record's parts joined); [] when it has none. A resolver that gives no answer: ProbeFailure, not conclusive. */
  txt(name: string): Promise<string[]>;
  /** `GET http://<domain><path>`: the status and the start of the body. ProbeFailure when no answer came (conclusive when the name does not resolve, or only to refused addresses). */
  fetch(domain: string, path: string): Promise<{ readonly status: number; readonly body: string }>;
  /** The certificate the TLS front serves for `domain` (validated for it); null when no front is configured. Rejects when none valid is served. */
  certificate(domain: string): Promise<ServedCertificate | null>;
}
export const DOMAIN_PROBES = Symbol('DOMAIN_PROBES');

export type ClaimResult = 'added' | 'taken' | 'limit_reached';

/**
 * The ownership side of the meta database's tenant domains (docs/design.md, "Custom domains and
 * TLS"). Checks are taken before they run: a due check goes to one holder until its lease ends, so
 * instances running the verifier side by side never check one domain twice at once, and a result is
 * stored only by the holder that still holds it.
 */
export interface DomainOwnershipStore {
  /** Adds a pending domain while its tenant has fewer than `maxDomains`, decided under a lock of the tenant; `audit` in the same transaction. */
  claim(domain: TenantDomain, maxDomains: number, audit?: AuditEntry): Promise<ClaimResult>;
  find(domain: string): Promise<TenantDomain | null>;
  listOf(tenantId: string): Promise<TenantDomain[]>;
  /** Up to `limit` domains whose check is due at `now` (oldest due first), each taken for `holder` until `leaseUntil`. */
  takeDue(now: Date, leaseUntil: Date, holder: string, limit: number): Promise<TenantDomain[]>;
  /** The tenant's domain taken now whatever its schedule, unless another holder's lease runs; null then, or when it has no such domain. */
  takeNow(tenantId: string, domain: string, now: Date, leaseUntil: Date, holder: string): Promise<TenantDomain | null>;
  /** Stores a check's outcome and lets the domain go, if `holder` still holds it; `audit` (a change of status) in the same transaction. */
  saveCheck(domain: string, holder: string, state: OwnershipState, audit?: AuditEntry): Promise<boolean>;
  saveCertificate(domain: string, certificate: CertificateState): Promise<void>;
  /** Every verified domain with its certificate as last read (null: never read). */
  certificates(): Promise<Array<{ readonly domain: string; readonly certificate: CertificateState | null }>>;
}
export const DOMAIN_OWNERSHIP_STORE = Symbol('DOMAIN_OWNERSHIP_STORE');

/** Told when a domain becomes verified or loses it (the webhooks `domain.verified`, `domain.unverified`). */
export interface DomainOwnershipEvents {
  verified(domain: TenantDomain): void;
  unverified(domain: TenantDomain): void;
}
export const DOMAIN_OWNERSHIP_EVENTS = Symbol('DOMAIN_OWNERSHIP_EVENTS');

/** How checks are scheduled. */
export interface CheckPolicy {
  /** The first retry of a failed check; each further one waits twice as long, up to `backoffMaxMs`. */
  readonly backoffMs: number;
  readonly backoffMaxMs: number;
  /** A verified domain is checked again this long after it passed. */
  readonly recheckMs: number;
  /** Conclusive failures in a row that unverify a verified domain. */
  readonly unverifyAfter: number;
  /** How long a pending or unverified domain is retried automatically. */
  readonly retryWindowMs: number;
}

/** The outcome of one check of every enabled method. */
export type OwnershipCheck =
  { readonly passed: true; readonly method: OwnershipMethod } | { readonly passed: false; readonly conclusive: boolean; readonly reason: string };

/**
 * Checks each enabled method at once; one that passes proves the domain. A failure is conclusive only
 * when every method answered no (a resolver without answer, a connection refused or timed out: the
 * check could not tell, and a verified domain is not unverified for it).
 */
export async function checkOwnership(probes: DomainProbes, domain: string, token: string, methods: readonly OwnershipMethod[]): Promise<OwnershipCheck> {
  const byDns = async (): Promise<OwnershipCheck> => {
    const name = txtRecordName(domain);
    const values = await probes.txt(name);
    if (values.some((v) => v.trim() === txtRecordValue(token))) return { passed: true, method: 'dns' };
    return { passed: false, conclusive: true, reason: values.length ? `TXT ${name} does not hold the value asked for` : `no TXT record ${name}` };
  };
  const byHttp = async (): Promise<OwnershipCheck> => {
    const path = challengePath(token);
    const answer = await probes.fetch(domain, path);
    if (answer.status === 200 && answer.body.trim() === token) return { passed: true, method: 'http' };
    return { passed: false, conclusive: true, reason: `http://${domain}${path} answered ${answer.status}${answer.status === 200 ? ' without the token' : ''}` };
  };
  const run = (check: () => Promise<OwnershipCheck>) =>
    check().catch((error: unknown): OwnershipCheck => ({
      passed: false,
      conclusive: error instanceof ProbeFailure && error.conclusive,
      reason: error instanceof Error ? error.message : String(error),
    }));
  const results = await Promise.all(methods.map((m) => run(m === 'dns' ? byDns : byHttp)));
  const passed = results.find((r) => r.passed);
  if (passed) return passed;
  const failed = results as Array<Extract<OwnershipCheck, { passed: false }>>;
  return { passed: false, conclusive: failed.every((r) => r.conclusive), reason: failed.map((r) => r.reason).join('; ') || 'no method enabled' };
}

const backoff = (policy: CheckPolicy, failures: number) => Math.min(policy.backoffMs * 2 ** Math.max(0, Math.min(failures - 1, 30)), policy.backoffMaxMs);

/**
 * Where a domain stands after a check (docs/design.md, "Custom domains and TLS"). A pass verifies it
 * and schedules its re-check. A verified domain is unverified after `unverifyAfter` conclusive
 * failures in a row, retried with backoff between them; a check that could not tell is retried
 * without counting. A pending or unverified domain is retried with backoff until `retryUntil`
 * (`asked`: a check the tenant asked for, which starts that window again).
 */
export function stateAfterCheck(current: OwnershipState, check: OwnershipCheck, now: Date, policy: CheckPolicy, asked = false): OwnershipState {
  const at = now.getTime();
  const later = (ms: number) => new Date(at + ms);
  if (check.passed) {
    return {
      status: 'verified',
      verifiedBy: check.method,
      verifiedAt: now,
      checkedAt: now,
      failures: 0,
      lastFailure: null,
      nextCheckAt: later(policy.recheckMs),
      retryUntil: null,
    };
  }
  const failed = { ...current, checkedAt: now, lastFailure: check.reason.slice(0, 500) };
  // An operator's assignment is its proof: a failed check of it changes nothing (the service runs none).
  if (current.verifiedBy === 'operator') return { ...failed, nextCheckAt: null };
  if (current.status === 'verified') {
    if (!check.conclusive) return { ...failed, nextCheckAt: later(backoff(policy, 1)) };
    const failures = current.failures + 1;
    if (failures < policy.unverifyAfter) return { ...failed, failures, nextCheckAt: later(backoff(policy, failures)) };
    const retryUntil = later(policy.retryWindowMs);
    return { ...failed, status: 'unverified', failures, nextCheckAt: later(backoff(policy, 1)), retryUntil };
  }
  const failures = current.failures + 1;
  const retryUntil = asked || current.retryUntil === null ? later(policy.retryWindowMs) : current.retryUntil;
  const next = at + backoff(policy, failures);
  return { ...failed, failures, retryUntil, nextCheckAt: next <= retryUntil.getTime() ? new Date(next) : null };
}

/** The state of a domain just added by its tenant: pending, its first check due after `firstCheckMs`. */
export function pendingState(now: Date, firstCheckMs: number, policy: CheckPolicy): OwnershipState {
  return {
    status: 'pending',
    verifiedBy: null,
    verifiedAt: null,
    checkedAt: null,
    failures: 0,
    lastFailure: null,
    nextCheckAt: new Date(now.getTime() + firstCheckMs),
    retryUntil: new Date(now.getTime() + policy.retryWindowMs),
  };
}

/** A domain an operator gives a tenant: verified by the operator's word, never checked. */
export function operatorAssignedDomain(domain: string, tenantId: string, now: Date): TenantDomain {
  return {
    domain,
    tenantId,
    token: null,
    createdAt: now,
    certificate: null,
    status: 'verified',
    verifiedBy: 'operator',
    verifiedAt: now,
    checkedAt: null,
    failures: 0,
    lastFailure: null,
    nextCheckAt: null,
    retryUntil: null,
  };
}
