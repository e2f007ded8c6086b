import { TenantStore } from './ports';

export interface TenantDirectoryOptions {
  /** How often the tables are read again: the bound on how late a new domain or a suspension is seen. */
  readonly refreshMs: number;
  /** Longest the start waits for the first read: a hung meta database must not hold the redirect's boot (default 2000). */
  readonly bootWaitMs?: number;
  /** The first failed refresh after a good one (one report per outage, not one per refresh). */
  readonly onOutage?: (error: unknown) => void;
}

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
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;
  private failing = false;

  constructor(
    private readonly store: TenantStore,
    private readonly options: TenantDirectoryOptions,
  ) {}

  /**
   * Reads both tables once (awaited at boot for at most `bootWaitMs`, so the first requests already
   * know them), then keeps reading. A first read still running then completes in the background.
   */
  async start(): Promise<void> {
    const waited = new Promise<void>((resolve) => setTimeout(resolve, this.options.bootWaitMs ?? 2000).unref());
    await Promise.race([this.refresh(), waited]);
    this.timer = setInterval(() => void this.refresh(), this.options.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
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
    this.refreshing ??= (async () => {
      try {
        const [domains, suspended] = await Promise.all([this.store.allDomains(), this.store.suspendedTenantIds()]);
        this.domains = new Map(domains.map((d) => [d.domain.toLowerCase(), d.tenantId]));
        this.suspended = new Set(suspended);
        this.failing = false;
      } catch (error) {
        if (!this.failing) this.options.onOutage?.(error);
        this.failing = true;
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }
}
