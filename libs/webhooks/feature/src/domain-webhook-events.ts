import type { DomainOwnershipEvents, TenantDomain } from '@shortlink/tenants-domain';
import { EventPublisher } from '@shortlink/webhooks-domain';

/** A domain as webhook bodies show it. */
const domainData = (d: TenantDomain) => ({
  name: d.domain,
  status: d.status,
  verifiedBy: d.verifiedBy,
  verifiedAt: d.verifiedAt?.toISOString() ?? null,
  checkedAt: d.checkedAt?.toISOString() ?? null,
  lastFailure: d.lastFailure,
});

/**
 * The platform events of a domain's ownership (docs/design.md, "Webhooks", "Custom domains and
 * TLS"): `domain.verified` when a check proves it, `domain.unverified` when re-checks find its proof
 * gone, published after the meta database took the change (never failing the check).
 */
export class DomainWebhookEvents implements DomainOwnershipEvents {
  constructor(private readonly events: EventPublisher) {}

  verified(domain: TenantDomain): void {
    this.events.publish([this.events.event('domain.verified', domain.tenantId, { domain: domainData(domain) })]);
  }

  unverified(domain: TenantDomain): void {
    this.events.publish([this.events.event('domain.unverified', domain.tenantId, { domain: domainData(domain) })]);
  }
}
