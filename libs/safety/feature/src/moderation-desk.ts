import type { AuditContext } from '@shortlink/audit-domain';
import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import {
  Link,
  LinkChangeFeed,
  LinkCommands,
  LinkRepository,
  ListCursors,
  Moderation,
  ShortUrlIdentifier,
  tenantsChange,
  unknownLink,
} from '@shortlink/links-domain';
import { AbuseReport, LinkRef, ModerationAction, QueueItem, QueueState, SafetyStore } from '@shortlink/safety-domain';
import { TenantDirectory, TenantService } from '@shortlink/tenants-domain';
import { AuditedSafetyNotices } from './safety-notices';

/** Reports shown with each item of the queue. */
const LATEST_REPORTS = 5;

/** What the desk needs of the other contexts, by their domain classes. */
export interface ModerationDeskParts {
  readonly store: SafetyStore;
  /** Every API's link changes, each followed by its audit entry and webhook event (docs/design.md, "Link events"). */
  readonly commands: LinkCommands<AuditContext>;
  readonly repository: LinkRepository;
  readonly tenants: TenantService;
  readonly directory: TenantDirectory;
  readonly feed: LinkChangeFeed;
  readonly notices: AuditedSafetyNotices;
  readonly cursors: ListCursors;
  readonly clock?: Clock;
}

export interface ModerationItemView {
  readonly item: QueueItem;
  readonly link: Link | null;
  readonly reports: readonly AbuseReport[];
  readonly tenantSuspended: boolean;
}

const STATE_OF: Readonly<Record<Exclude<ModerationAction, 'suspend-tenant'>, Moderation>> = { clear: 'clear', flag: 'flagged', ban: 'banned' };
const RANK: Readonly<Record<Moderation, number>> = { clear: 0, flagged: 1, banned: 2 };
/** The queue's cursors are the operators' own (a scope no tenant id can take). */
const QUEUE_SCOPE = 'moderation-queue';

/**
 * The operators' moderation (docs/design.md, "Trust and safety"): the queue of links visitors
 * reported or a feed (or Web Risk) hit, with their health, and the actions on them. Clear, flag and
 * ban are the link commands' moderation (an edit's path to every redirect within the edit bound, the
 * operators' audit log by the link hooks, `link.flagged` to the tenant); suspending the link's tenant is the tenants'
 * own change (audited in its transaction), then told on the link channel so that every redirect
 * reads its tenants again at once. Each action resolves the link's item.
 */
export class ModerationDesk {
  private readonly clock: Clock;

  constructor(private readonly parts: ModerationDeskParts) {
    this.clock = parts.clock ?? systemClock;
  }

  async queue(state: QueueState, limit: number, cursor: string | null): Promise<{ items: ModerationItemView[]; nextCursor: string | null }> {
    const filters = { state };
    const after = cursor ? this.parts.cursors.open(QUEUE_SCOPE, filters, cursor) : null;
    const found = await this.parts.store.listQueue(state, after ? { updatedAt: after.createdAt, linkId: after.id } : null, limit + 1);
    const page = found.slice(0, limit);
    const items = await Promise.all(page.map((item) => this.view(item)));
    const last = page[page.length - 1];
    const nextCursor = found.length > limit ? this.parts.cursors.seal(QUEUE_SCOPE, filters, { createdAt: last.updatedAt, id: last.linkId }) : null;
    return { items, nextCursor };
  }

  async reports(id: ShortUrlIdentifier): Promise<AbuseReport[]> {
    const link = await this.find(id);
    return this.parts.store.reportsOf(link.id, 100);
  }

  /** An operator's action on a link (`reason` required but for clear); the link's item afterwards. */
  async act(id: ShortUrlIdentifier, action: ModerationAction, reason: string | null, context: AuditContext): Promise<ModerationItemView> {
    if (action !== 'clear' && reason === null)
      throw new DomainError(
        ErrorCode.VALIDATION_FAILED,
        'reason is required to flag or ban a link or suspend its tenant (it is recorded, and visitors see it)',
        {
          field: 'reason',
        },
      );
    const link = await this.find(id);
    if (action === 'suspend-tenant') {
      await this.parts.tenants.updateTenant(link.tenantId, { status: 'suspended' }, context);
      await this.parts.directory.refresh();
      // Every redirect reads its tenants again now, not at its next refresh (docs/design.md, "Trust and safety").
      await this.parts.feed.publish(tenantsChange(this.clock.now()));
    } else {
      const change = await this.parts.commands.moderate(context, id, STATE_OF[action], action === 'clear' ? null : reason);
      if (RANK[change.after.moderation] > RANK[change.before.moderation]) this.parts.notices.flagged(change.after);
    }
    const ref: LinkRef = { linkId: link.id, domain: link.domain, code: link.code, tenantId: link.tenantId };
    await this.parts.store.resolve(ref, { action, reason, by: context.actor.name, at: new Date(this.clock.now()) });
    return this.view((await this.parts.store.queueItem(link.id))!);
  }

  private async find(id: ShortUrlIdentifier): Promise<Link> {
    const link = await this.parts.repository.findByCode(id);
    if (!link) throw unknownLink(id);
    return link;
  }

  private async view(item: QueueItem): Promise<ModerationItemView> {
    const found = await this.parts.repository.findByCode(item).catch(() => null);
    const link = found && found.id === item.linkId ? found : null;
    const reports = item.reports > 0 ? await this.parts.store.reportsOf(item.linkId, LATEST_REPORTS) : [];
    return { item, link, reports, tenantSuspended: this.parts.directory.isSuspended(item.tenantId) };
  }
}
