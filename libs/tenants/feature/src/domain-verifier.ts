import { Counter, Gauge, Registry } from 'prom-client';
import { DomainOwnershipStore, OwnershipObserver, TenantDirectory } from '@shortlink/tenants-domain';

/** How long the certificates read from the meta database serve the expiry gauge (scrapes come every 15-60 s). */
const CERTIFICATES_HELD_MS = 30_000;

/**
 * The Prometheus series of custom domains (docs/operations.md, "Custom domains and TLS"): checks by
 * outcome, certificates issued and failed (counted where the certificate was read: sum them over
 * instances), days until each verified domain's certificate expires and domains by status (both
 * read from the meta database: every instance shows the same, take `min by (domain)`).
 */
export class DomainMetrics implements OwnershipObserver {
  private readonly checks: Counter<'outcome'>;
  private readonly issued: Counter;
  private readonly failures: Counter;
  private held: { readonly at: number; readonly rows: Promise<Array<{ domain: string; days: number }>> } | null = null;

  constructor(
    registry: Registry,
    private readonly store: DomainOwnershipStore,
    directory: TenantDirectory,
  ) {
    const registers = [registry];
    this.checks = new Counter({
      name: 'shortlink_domain_checks_total',
      help: 'Ownership checks of tenant domains by outcome',
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of ['passed', 'failed', 'inconclusive', 'errored']) this.checks.inc({ outcome }, 0);
    this.issued = new Counter({
      name: 'shortlink_domain_certificates_issued_total',
      help: 'Certificates the TLS front served for a verified domain that were not the ones read before (issued or renewed)',
      registers,
    });
    this.failures = new Counter({
      name: 'shortlink_domain_certificate_failures_total',
      help: 'Reads of a verified domain’s certificate from the TLS front that found none valid for it',
      registers,
    });
    const expiries = () => this.expiries();
    new Gauge({
      name: 'shortlink_domain_certificate_expiry_days',
      help: 'Days until the certificate the TLS front served for a verified domain expires (as last read)',
      labelNames: ['domain'],
      registers,
      async collect() {
        this.reset();
        for (const { domain, days } of await expiries()) this.set({ domain }, days);
      },
    });
    new Gauge({
      name: 'shortlink_domains',
      help: 'Tenant domains by status',
      labelNames: ['status'],
      registers,
      collect() {
        for (const [status, count] of Object.entries(directory.countByStatus())) this.set({ status }, count);
      },
    });
  }

  checked(outcome: 'passed' | 'failed' | 'inconclusive'): void {
    this.checks.inc({ outcome });
  }

  /** A check that threw before its outcome was stored (the verifier logs it too). */
  checkFailed(): void {
    this.checks.inc({ outcome: 'errored' });
  }

  certificate(outcome: 'issued' | 'unchanged' | 'failed'): void {
    if (outcome === 'issued') this.issued.inc();
    else if (outcome === 'failed') this.failures.inc();
  }

  /** Read again when what is held is older than CERTIFICATES_HELD_MS; a failed read shows nothing this scrape. */
  private async expiries(): Promise<Array<{ domain: string; days: number }>> {
    if (!this.held || Date.now() - this.held.at > CERTIFICATES_HELD_MS) {
      const rows = this.store
        .certificates()
        .then((all) =>
          all.flatMap(({ domain, certificate }) =>
            certificate?.expiresAt ? [{ domain, days: Math.round(((certificate.expiresAt.getTime() - Date.now()) / 86_400_000) * 100) / 100 }] : [],
          ),
        );
      this.held = { at: Date.now(), rows };
      rows.catch(() => (this.held = null));
    }
    return this.held.rows.catch(() => []);
  }
}
