import { AuditContext, AuditLog } from '@shortlink/audit-domain';
import { Link, LinkUpdate, ShortUrlIdentifier } from '@shortlink/links-domain';
import { EventPublisher } from '@shortlink/webhooks-domain';
import { LinkAudit, LinkCounts } from '../audit/link-audit';

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
 * The hook every link change passes after the shard acknowledged it: its audit entry (LinkAudit)
 * and its platform event for the webhooks (docs/design.md, "Webhooks"), neither failing the
 * request. Bound in place of LinkAudit, so the controllers call one thing. Bulk edits and deletes
 * are audited but send no per-link events (a bulk change of 10 000 links is not 10 000 webhooks).
 */
export class LinkChangeHooks extends LinkAudit {
  constructor(
    log: AuditLog,
    private readonly events: EventPublisher,
  ) {
    super(log);
  }

  override async created(context: AuditContext, link: Link): Promise<void> {
    await super.created(context, link);
    this.events.publish([this.events.event('link.created', link.tenantId, { link: linkData(link) })]);
  }

  override async edited(context: AuditContext, change: LinkUpdate): Promise<void> {
    await super.edited(context, change);
    if (change.before.version === change.after.version) return;
    this.events.publish([this.events.event('link.updated', change.after.tenantId, { link: linkData(change.after) })]);
  }

  override async deleted(context: AuditContext, tenantId: string, id: ShortUrlIdentifier): Promise<void> {
    await super.deleted(context, tenantId, id);
    this.events.publish([this.events.event('link.deleted', tenantId, { link: { code: id.code, domain: id.domain } })]);
  }

  override async batch(context: AuditContext, tenantId: string, counts: LinkCounts): Promise<void> {
    await super.batch(context, tenantId, counts);
    this.events.publish([this.events.event('batch.completed', tenantId, { created: counts.count, failed: counts.failed })]);
  }
}
