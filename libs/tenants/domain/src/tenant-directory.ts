import { DomainEntry, DomainStatus } from './domain-ownership';
import { PeriodicRead, PeriodicReadOptions } from './periodic-read';
import { TenantStore } from './ports';

/** How often the tables are read again: the bound on how late a new domain or a suspension is seen. */
export type TenantDirectoryOptions = PeriodicReadOptions;

/**
 * What the redirect needs to know about tenants, held in memory so that the hot path asks a Set
 * and never the meta database (docs/design.md, "Tenants, keys and plans"): the tenants' own
 * domains (a link is resolved on the host it was reached by) and the suspended tenants (their
 * links answer a suspended page). Both are read again every `refreshMs`; when the meta database
 * is unreachable the last tables stay in use.
 */
export class TenantDirectory {
  private domains = new Map<string, DomainEntry>();
  private suspended = new Set<string>();
  private readonly periodic: PeriodicRead;

  constructor(
    private readonly store: TenantStore,
    options: TenantDirectoryOptions,
  ) {
    this.periodic = new PeriodicRead(() => this.read(), options);
  }

  /** Reads both tables once (awaited at boot for at most `bootWaitMs`, so the first requests already know them), then keeps reading. */
  start(): Promise<void> {
    return this.periodic.start();
  }

  stop(): void {
    this.periodic.stop();
  }

  /** Whether `host` (lower case, with its port if any) is a tenant's verified domain: one that serves its links. */
  isTenantDomain(host: string): boolean {
    return this.domains.size > 0 && this.domains.get(host)?.status === 'verified';
  }

  /** Whether a tenant holds `host`, verified or not (targets on it are refused: docs/design.md, "URL safety"). */
  holdsDomain(host: string): boolean {
    return this.domains.has(host);
  }

  /** Whether `host` is a tenant's domain that is not verified: it serves nothing but its HTTP token (docs/design.md, "Custom domains and TLS"). */
  isUnverifiedDomain(host: string): boolean {
    const status = this.domains.size > 0 ? this.domains.get(host)?.status : undefined;
    return status !== undefined && status !== 'verified';
  }

  /** The token `host` serves at /.well-known/shortlink-challenge/ (any status: re-checks read it too). */
  challengeTokenOf(host: string): string | undefined {
    return this.domains.get(host)?.token ?? undefined;
  }

  /** Whether the TLS front may get a certificate for `host`: a verified domain of an active tenant. */
  mayHaveCertificate(host: string): boolean {
    const entry = this.domains.get(host);
    return entry !== undefined && entry.status === 'verified' && !this.suspended.has(entry.tenantId);
  }

  /** How many tenant domains are in each status (the domains gauge). */
  countByStatus(): Record<DomainStatus, number> {
    const counts: Record<DomainStatus, number> = { pending: 0, verified: 0, unverified: 0 };
    for (const entry of this.domains.values()) counts[entry.status]++;
    return counts;
  }

  isSuspended(tenantId: string): boolean {
    return this.suspended.size > 0 && this.suspended.has(tenantId);
  }

  /** One read of both tables; concurrent calls share it. A failure keeps the tables as they were. */
  refresh(): Promise<void> {
    return this.periodic.run();
  }

  private async read(): Promise<void> {
    const [domains, suspended] = await Promise.all([this.store.allDomains(), this.store.suspendedTenantIds()]);
    this.domains = new Map(domains.map((d) => [d.domain.toLowerCase(), d]));
    this.suspended = new Set(suspended);
  }
}
