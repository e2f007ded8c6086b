import { AuditAction, AuditChanges, AuditContext, AuditDetails, AuditLog, diffOf, OPERATOR_LOG, plain } from '@shortlink/audit-domain';
import { BulkChangeSelection, Link, LinkChangeHooks, LinkCounts, LinkEdit, LinkUpdate, ShortUrlIdentifier } from '@shortlink/links-domain';

/** A link as the audit log compares it: the API's field names, its password as whether it has one (never the hash). */
function auditable(link: Link) {
  return {
    url: link.targetUrl,
    title: link.title,
    tags: link.tags,
    maxClicks: link.maxClicks,
    passwordProtected: link.passwordHash !== null,
    passwordRememberHours: link.passwordRememberHours,
    social: link.social,
    utm: link.utm,
    forwardQuery: link.forwardQuery,
    redirectRules: link.redirectRules,
    appTargets: link.appTargets,
    trackConversions: link.trackConversions,
    conversionParam: link.conversionParam,
    variants: link.variants,
    clicksPerIpPerMinute: link.clicksPerIpPerMinute,
    expiresAt: link.expiresAt,
    redirectType: link.redirectType,
    status: link.status,
    moderation: link.moderation,
  };
}
const LINK_FIELDS = [
  'url',
  'title',
  'tags',
  'maxClicks',
  'passwordProtected',
  'passwordRememberHours',
  'social',
  'utm',
  'forwardQuery',
  'redirectRules',
  'appTargets',
  'trackConversions',
  'conversionParam',
  'variants',
  'clicksPerIpPerMinute',
  'expiresAt',
  'redirectType',
  'status',
  'moderation',
] as const satisfies ReadonlyArray<keyof ReturnType<typeof auditable>>;

const target = (id: ShortUrlIdentifier) => ({ type: 'link' as const, id: id.code, domain: id.domain });
const SEVERAL = { type: 'links' as const, id: null, domain: null };

/**
 * The audit entries of link changes (docs/design.md, "Audit log"). Links live on the shards, so
 * each entry is written right after the shard acknowledged the change (AuditLog.record: never
 * failing the request, retried while the meta database is down). One entry per request: a batch or
 * a bulk change records its count, not a line per link.
 */
export class LinkAudit implements LinkChangeHooks<AuditContext> {
  constructor(private readonly log: AuditLog) {}

  created(context: AuditContext, link: Link): Promise<void> {
    const details: AuditDetails = { url: link.targetUrl, ...(link.passwordHash !== null ? { passwordProtected: true } : {}) };
    return this.log.record(this.log.entry(context, { log: link.tenantId, action: 'link.created', target: target(link), details }));
  }

  /** An edit: its diff, named `link.disabled` or `link.enabled` when it changed the status so; nothing when it changed nothing. */
  edited(context: AuditContext, { before, after }: LinkUpdate): Promise<void> {
    const changes = diffOf(auditable(before), auditable(after), LINK_FIELDS);
    const passwordChanged = before.passwordHash !== after.passwordHash;
    if (!changes && !passwordChanged) return Promise.resolve();
    const action: AuditAction =
      after.status === before.status
        ? 'link.edited'
        : after.status === 'disabled'
          ? 'link.disabled'
          : after.status === 'active'
            ? 'link.enabled'
            : 'link.edited';
    return this.log.record(
      this.log.entry(context, { log: after.tenantId, action, target: target(after), changes, details: passwordChanged ? { passwordChanged: true } : null }),
    );
  }

  deleted(context: AuditContext, tenantId: string, id: ShortUrlIdentifier): Promise<void> {
    return this.log.record(this.log.entry(context, { log: tenantId, action: 'link.deleted', target: target(id) }));
  }

  /** A batch request: how many links it created (none: no entry) and how many rows failed. */
  batch(context: AuditContext, tenantId: string, counts: LinkCounts): Promise<void> {
    if (counts.count === 0) return Promise.resolve();
    return this.log.record(this.log.entry(context, { log: tenantId, action: 'link.batch_created', target: SEVERAL, details: { ...counts } }));
  }

  /**
   * A bulk edit (`edit` given) or delete: how many links it changed (none: no entry), how many it
   * could not, what selected them, and for an edit the values it set (`to` only: each link had its own `from`).
   */
  bulk(context: AuditContext, tenantId: string, edit: LinkEdit | null, counts: LinkCounts, selection: BulkChangeSelection): Promise<void> {
    if (counts.count === 0) return Promise.resolve();
    const details: Record<string, AuditDetails[string]> = { ...counts };
    if (selection.tag !== undefined) details.tag = selection.tag;
    if (selection.domain !== undefined) details.domain = selection.domain;
    let changes: AuditChanges | null = null;
    let action: AuditAction = 'link.bulk_deleted';
    if (edit) {
      const set: Record<string, { to: ReturnType<typeof plain> }> = {};
      for (const [field, value] of Object.entries(edit)) {
        if (value === undefined) continue;
        if (field === 'password') {
          set.passwordProtected = { to: value !== null };
          details.passwordChanged = true;
        } else set[field] = { to: plain(value) };
      }
      changes = set;
      action = edit.status === 'disabled' ? 'link.bulk_disabled' : edit.status === 'active' ? 'link.bulk_enabled' : 'link.bulk_edited';
    }
    return this.log.record(this.log.entry(context, { log: tenantId, action, target: SEVERAL, changes, details }));
  }

  /** An operator's moderation of any tenant's link: the operator log, with the link's tenant (nothing when it changed nothing). */
  moderated(context: AuditContext, { before, after }: LinkUpdate): Promise<void> {
    const changes = diffOf(
      { moderation: before.moderation, reason: before.moderationReason },
      { moderation: after.moderation, reason: after.moderationReason },
      ['moderation', 'reason'],
    );
    if (!changes) return Promise.resolve();
    return this.log.record(
      this.log.entry(context, { log: OPERATOR_LOG, action: 'link.moderated', target: target(after), changes, details: { tenantId: after.tenantId } }),
    );
  }
}
