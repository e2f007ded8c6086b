import type { Link, LinkHealth, LinkUpdate, ShortUrlIdentifier } from '@shortlink/links-domain';
import type { ReputationVerdict } from '@shortlink/url-policy';
import { AbuseReport } from './ports';

/**
 * What the platform tells when the safety jobs change a link (docs/design.md, "Trust and safety"):
 * the operators' audit log and the tenant's webhook `link.flagged` for a verdict, the webhook
 * `link.broken` for a link found broken, the tenant's audit log for a visitor's report. The feature
 * binds it to the audit log and the webhooks; it never throws.
 */
export interface SafetyNotices {
  escalated(change: LinkUpdate, verdict: ReputationVerdict): Promise<void>;
  broken(change: LinkUpdate): Promise<void>;
  reported(report: AbuseReport): Promise<void>;
}

/** The links service as the safety jobs use it (LinkService): find a link, apply a verdict, record a health. */
export interface SafetyLinks {
  find(id: ShortUrlIdentifier): Promise<Link | null>;
  escalate(id: ShortUrlIdentifier, linkId: string, verdict: ReputationVerdict): Promise<LinkUpdate | null>;
  recordHealth(id: ShortUrlIdentifier, linkId: string, health: LinkHealth): Promise<LinkUpdate | null>;
}

/** SafetyLinks over the links context: LinkService for the writes, the repository for a link whatever its tenant. */
export const safetyLinksOf = (
  service: { escalate: SafetyLinks['escalate']; recordHealth: SafetyLinks['recordHealth'] },
  repository: { findByCode(id: ShortUrlIdentifier): Promise<Link | null> },
): SafetyLinks => ({
  find: (id) => repository.findByCode(id),
  escalate: (id, linkId, verdict) => service.escalate(id, linkId, verdict),
  recordHealth: (id, linkId, health) => service.recordHealth(id, linkId, health),
});
