import { AuditContext, auditEntry, AuditEntry, SYSTEM_ACTOR } from '@shortlink/audit-domain';
import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import { Principal } from './credentials';
import {
  CertificateState,
  CheckPolicy,
  checkOwnership,
  DomainOwnershipEvents,
  DomainOwnershipStore,
  DomainProbes,
  newDomainToken,
  OwnershipCheck,
  OwnershipMethod,
  OwnershipState,
  pendingState,
  stateAfterCheck,
  TenantDomain,
} from './domain-ownership';
import { TenantStore } from './ports';
import { Plan } from './tenant';
import { checkDomain, TenantService } from './tenant-service';

/** What the verifier counts (metrics). */
export interface OwnershipObserver {
  checked?(outcome: 'passed' | 'failed' | 'inconclusive'): void;
  /** A check that threw before its outcome was stored (the meta database, a probe's bug): its domain waits for its lease to end. */
  checkFailed?(domain: string, error: unknown): void;
  /** A certificate read from the TLS front: `issued` when it is not the one read before. */
  certificate?(outcome: 'issued' | 'unchanged' | 'failed'): void;
}

export interface DomainOwnershipOptions {
  /** Domains a tenant may hold per plan (its own and those an operator gave it). */
  readonly maxDomains: Readonly<Record<Plan, number>>;
  readonly policy: CheckPolicy;
  /** The methods a check tries (DOMAIN_VERIFICATION_METHODS). */
  readonly methods: readonly OwnershipMethod[];
  /** The first automatic check of a domain just added (its record is rarely in DNS at once). */
  readonly firstCheckMs: number;
  /** A check taken by an instance is its own for this long (then another may take it). */
  readonly leaseMs: number;
  /** This instance, as the holder of the checks it takes. */
  readonly holder: string;
  readonly events: DomainOwnershipEvents;
  /** Checks run at once by one instance's run. */
  readonly concurrency?: number;
  readonly observer?: OwnershipObserver;
  readonly clock?: Clock;
}

/**
 * Domains a tenant adds itself and the proof that they are its own (docs/design.md, "Custom domains
 * and TLS"): added pending (capped per plan), shown with the DNS record and the HTTP token that
 * prove them, checked by the verifier (every instance runs it; each check is taken by one) with
 * backoff, verified, re-checked, unverified when the proof is gone. A change of status is written
 * with its audit entry and then told (the webhooks).
 */
export class DomainOwnershipService {
  private readonly clock: Clock;

  constructor(
    private readonly store: DomainOwnershipStore,
    private readonly tenants: TenantService,
    private readonly tenantStore: TenantStore,
    private readonly probes: DomainProbes,
    private readonly options: DomainOwnershipOptions,
  ) {
    this.clock = options.clock ?? systemClock;
  }

  /** A tenant adds a domain: pending, with its token; 409 `DOMAIN_TAKEN` when any tenant holds it, 403 `DOMAIN_LIMIT_REACHED` at the plan's cap. */
  async add(principal: Principal, raw: unknown, audit?: AuditContext): Promise<TenantDomain> {
    const domain = this.tenants.claimableDomain(raw);
    const now = this.now();
    const added: TenantDomain = {
      domain,
      tenantId: principal.tenantId,
      token: newDomainToken(),
      createdAt: now,
      certificate: null,
      ...pendingState(now, this.options.firstCheckMs, this.options.policy),
    };
    const entry = audit && this.entry(audit, principal.tenantId, 'domain.added', domain, now, {});
    const max = this.options.maxDomains[principal.plan];
    const result = await this.store.claim(added, max, entry);
    if (result === 'taken') throw new DomainError(ErrorCode.DOMAIN_TAKEN, `${domain} already belongs to a tenant`, { domain });
    if (result === 'limit_reached')
      throw new DomainError(ErrorCode.DOMAIN_LIMIT_REACHED, `the ${principal.plan} plan allows ${max} domains per tenant; remove one first`, { limit: max });
    this.tenants.forgetDomain(domain);
    return added;
  }

  listOf(tenantId: string): Promise<TenantDomain[]> {
    return this.store.listOf(tenantId);
  }

  /** The tenant's domain; 404 `DOMAIN_NOT_FOUND` for any other (whoever holds it: another tenant's cannot be probed). */
  async get(tenantId: string, raw: unknown): Promise<TenantDomain> {
    const domain = checkDomain(raw);
    const found = await this.store.find(domain);
    if (!found || found.tenantId !== tenantId) throw notFound(domain);
    return found;
  }

  /** The tenant removes its domain: its links there stop resolving, its settings go back to the defaults; `domain.removed`. */
  async remove(tenantId: string, raw: unknown, audit?: AuditContext): Promise<void> {
    const domain = checkDomain(raw);
    const entry = audit && this.entry(audit, tenantId, 'domain.removed', domain, this.now(), {});
    if (!(await this.tenantStore.removeDomain(tenantId, domain, entry))) throw notFound(domain);
    this.tenants.forgetDomain(domain);
  }

  /**
   * The tenant asks for a check now (after creating its record): runs it at once and answers the
   * domain as it then stands; starts the window of automatic retries again. A check another instance
   * is running is not run twice: the domain is answered as it stands. An operator's domain is not checked.
   */
  async checkNow(tenantId: string, raw: unknown, audit?: AuditContext): Promise<TenantDomain> {
    const current = await this.get(tenantId, raw);
    if (current.verifiedBy === 'operator' || current.token === null) return current;
    const now = this.now();
    const taken = await this.store.takeNow(tenantId, current.domain, now, this.leaseEnd(now), this.options.holder);
    if (!taken) return (await this.store.find(current.domain)) ?? current;
    return this.check(taken, audit ?? { actor: SYSTEM_ACTOR, clientAddress: null }, true);
  }

  /**
   * One run of the verifier: takes the checks due now (at most `limit`) and runs them, `concurrency`
   * at a time. Answers how many it ran. A check that throws (the meta database) leaves its domain to
   * be taken again when the lease ends, and is told to the observer (logged and counted), never lost silently.
   */
  async runDue(limit = 100): Promise<number> {
    const now = this.now();
    const due = await this.store.takeDue(now, this.leaseEnd(now), this.options.holder, limit);
    const queue = [...due];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const domain = next.domain;
        await this.check(next, { actor: SYSTEM_ACTOR, clientAddress: null }, false).catch((error: unknown) =>
          this.options.observer?.checkFailed?.(domain, error),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency ?? 8, due.length) }, worker));
    return due.length;
  }

  /** Runs one taken check and stores where it leaves the domain; a change of status goes with its entry, then to the events. */
  private async check(domain: TenantDomain, audit: AuditContext, asked: boolean): Promise<TenantDomain> {
    const check: OwnershipCheck =
      domain.token === null
        ? { passed: false, conclusive: false, reason: 'an operator’s domain has nothing to prove' }
        : await checkOwnership(this.probes, domain.domain, domain.token, this.options.methods);
    this.options.observer?.checked?.(check.passed ? 'passed' : check.conclusive ? 'failed' : 'inconclusive');
    const now = this.now();
    const state = stateAfterCheck(domain, check, now, this.options.policy, asked);
    const becameVerified = state.status === 'verified' && domain.status !== 'verified';
    const lost = state.status === 'unverified' && domain.status === 'verified';
    // A domain just verified is checked once more a backoff step later: by then every redirect instance
    // knows it, and that check reads its certificate (the front asks the redirect before it gets one).
    const scheduled: OwnershipState = becameVerified ? { ...state, nextCheckAt: new Date(now.getTime() + this.options.policy.backoffMs) } : state;
    const entry =
      becameVerified || lost
        ? this.entry(audit, domain.tenantId, becameVerified ? 'domain.verified' : 'domain.unverified', domain.domain, now, transitionDetails(check))
        : undefined;
    if (!(await this.store.saveCheck(domain.domain, this.options.holder, scheduled, entry))) return (await this.store.find(domain.domain)) ?? domain;
    const after: TenantDomain = { ...domain, ...scheduled };
    if (becameVerified || lost) {
      this.tenants.forgetDomain(domain.domain);
      if (becameVerified) this.options.events.verified(after);
      else this.options.events.unverified(after);
    }
    if (check.passed && domain.status === 'verified') return { ...after, certificate: await this.readCertificate(after) };
    return after;
  }

  /** The certificate the TLS front serves for a verified domain, stored; nothing when no front is configured. */
  private async readCertificate(domain: TenantDomain): Promise<CertificateState | null> {
    let certificate: CertificateState;
    try {
      const served = await this.probes.certificate(domain.domain);
      if (served === null) return domain.certificate;
      certificate = { expiresAt: served.expiresAt, fingerprint: served.fingerprint, checkedAt: this.now(), error: null };
      this.options.observer?.certificate?.(served.fingerprint === domain.certificate?.fingerprint ? 'unchanged' : 'issued');
    } catch (error) {
      // What was served before keeps counting down: a front that stops serving one is alerted on by its expiry.
      const before = domain.certificate;
      certificate = { expiresAt: before?.expiresAt ?? null, fingerprint: before?.fingerprint ?? null, checkedAt: this.now(), error: messageOf(error) };
      this.options.observer?.certificate?.('failed');
    }
    await this.store.saveCertificate(domain.domain, certificate);
    return certificate;
  }

  private entry(audit: AuditContext, tenantId: string, action: AuditEntry['action'], domain: string, at: Date, details: Record<string, string>): AuditEntry {
    return auditEntry(audit, { log: tenantId, action, target: { type: 'domain', id: domain, domain }, details }, at);
  }

  private leaseEnd(now: Date): Date {
    return new Date(now.getTime() + this.options.leaseMs);
  }

  private now(): Date {
    return new Date(this.clock.now());
  }
}

const notFound = (domain: string) => new DomainError(ErrorCode.DOMAIN_NOT_FOUND, `you have no domain ${domain}`, { domain });

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 500);

/** The audit entry's facts of a change of status: the method that proved it, or why the proof was found gone. */
function transitionDetails(check: OwnershipCheck): Record<string, string> {
  return check.passed ? { method: check.method } : { reason: check.reason.slice(0, 300) };
}
