import type { AuditContext } from '@shortlink/audit-domain';
import { Link, LinkChangeHooks, LinkCounts, LinkUpdate, ShortUrlIdentifier } from '@shortlink/links-domain';
import { EventPublisher } from '@shortlink/webhooks-domain';

/** A link as webhook bodies show it (never its password hash). */
const linkData = (link: Link) => ({
  code: link.code,
  domain: link.domain,
  url: link.targetUrl,
  title: link.title,
  tags: [...link.tags],
  status: link.status,
  expiresAt: link.expiresAt?.toISOString() ?? null,
  createdAt: link.createdAt.toISOString(),
  updatedAt: link.updatedAt.toISOString(),
});

/**
 * The platform events of link changes, for the webhooks (docs/design.md, "Webhooks"), published
 * after the shard acknowledged the change and never failing the request. Bulk edits and deletes
 * send no per-link events (a bulk change of 10 000 links is not 10 000 webhooks), nor does an
 * operator's moderation.
 */
export class LinkWebhookEvents implements LinkChangeHooks<AuditContext> {
  constructor(private readonly events: EventPublisher) {}

  async created(_context: AuditContext, link: Link): Promise<void> {
    this.events.publish([this.events.event('link.created', link.tenantId, { link: linkData(link) })]);
  }

  async edited(_context: AuditContext, change: LinkUpdate): Promise<void> {
    if (change.before.version === change.after.version) return;
    this.events.publish([this.events.event('link.updated', change.after.tenantId, { link: linkData(change.after) })]);
  }

  async deleted(_context: AuditContext, tenantId: string, id: ShortUrlIdentifier): Promise<void> {
    this.events.publish([this.events.event('link.deleted', tenantId, { link: { code: id.code, domain: id.domain } })]);
  }

  async batch(_context: AuditContext, tenantId: string, counts: LinkCounts): Promise<void> {
    this.events.publish([this.events.event('batch.completed', tenantId, { created: counts.count, failed: counts.failed })]);
  }

  async bulk(): Promise<void> {}

  async moderated(): Promise<void> {}
}
