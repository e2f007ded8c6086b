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
  private domains = new Map<string, string>();
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

  /** Whether `host` (lower case, with its port if any) is a tenant's domain. */
  isTenantDomain(host: string): boolean {
    return this.domains.has(host);
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
    this.domains = new Map(domains.map((d) => [d.domain.toLowerCase(), d.tenantId]));
    this.suspended = new Set(suspended);
  }
}
