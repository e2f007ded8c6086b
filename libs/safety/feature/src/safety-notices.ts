import { AuditContext, AuditLog, diffOf, OPERATOR_LOG, SYSTEM_ACTOR } from '@shortlink/audit-domain';
import type { Link, LinkUpdate } from '@shortlink/links-domain';
import type { AbuseReport, SafetyNotices } from '@shortlink/safety-domain';
import type { ReputationVerdict } from '@shortlink/url-policy';
import { EventPublisher } from '@shortlink/webhooks-domain';

/** Reports are written in the tenant's log by no person: the visitor stays unknown. */
const VISITOR: AuditContext = { actor: { type: 'system', id: 'visitor-report', name: 'a visitor' }, clientAddress: null };
const JOBS: AuditContext = { actor: SYSTEM_ACTOR, clientAddress: null };

const target = (link: Pick<Link, 'code' | 'domain'>) => ({ type: 'link' as const, id: link.code, domain: link.domain });

/** A link as the safety webhooks show it. */
export const safetyLinkData = (link: Link) => ({
  code: link.code,
  domain: link.domain,
  url: link.targetUrl,
  status: link.status,
  moderation: { state: link.moderation, reason: link.moderationReason, source: link.moderationSource ?? null },
  health: healthData(link.health),
});

/** A link's health as the safety routes and webhooks show it (the link API's shape). */
export const healthData = (health: Link['health']) =>
  health
    ? {
        state: health.state,
        since: health.since.toISOString(),
        brokenTargets: [...health.brokenTargets],
        lastStatus: health.lastStatus,
        lastError: health.lastError,
        lastCheckedAt: health.checkedAt.toISOString(),
      }
    : null;

/**
 * What the safety jobs tell (docs/design.md, "Trust and safety"): a verdict that changed a link in
 * the operators' log (`link.moderated`, by the system, with its source) and to the tenant by
 * webhook (`link.flagged`, a ban too); a link found broken by webhook (`link.broken`); a visitor's
 * report in the tenant's log (`link.reported`, its entry id the report's, so a relay done twice
 * writes it once). Never throws: the audit log retries on its own, the events wait for the bus.
 */
export class AuditedSafetyNotices implements SafetyNotices {
  constructor(
    private readonly audit: AuditLog,
    private readonly events: EventPublisher,
  ) {}

  async escalated({ before, after }: LinkUpdate, verdict: ReputationVerdict): Promise<void> {
    const changes = diffOf(
      { moderation: before.moderation, reason: before.moderationReason },
      { moderation: after.moderation, reason: after.moderationReason },
      ['moderation', 'reason'],
    );
    await this.audit.record(
      this.audit.entry(JOBS, {
        log: OPERATOR_LOG,
        action: 'link.moderated',
        target: target(after),
        changes,
        details: { tenantId: after.tenantId, source: verdict.source },
      }),
    );
    this.flagged(after);
  }

  /** The tenant's webhook of a link that became flagged or banned (an operator's action too). */
  flagged(link: Link): void {
    this.events.publish([this.events.event('link.flagged', link.tenantId, { link: safetyLinkData(link) })]);
  }

  async broken({ after }: LinkUpdate): Promise<void> {
    this.events.publish([this.events.event('link.broken', after.tenantId, { link: safetyLinkData(after) })]);
  }

  async reported(report: AbuseReport): Promise<void> {
    const entry = this.audit.entry(VISITOR, {
      log: report.tenantId,
      action: 'link.reported',
      target: target(report),
      details: { reason: report.reason, ...(report.details ? { details: report.details } : {}), reportId: report.id },
    });
    await this.audit.record({ ...entry, id: report.id, at: report.createdAt });
  }
}
