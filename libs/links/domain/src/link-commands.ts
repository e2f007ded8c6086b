import type { Link, Moderation, ShortUrlIdentifier } from './link';
import type { BulkChangeSelection, LinkChangeHooks, LinkCounts } from './link-change-hooks';
import type { LinkCreation, LinkEdit, LinkService, LinkUpdate } from './link-service';

export const LINK_COMMANDS = Symbol('LINK_COMMANDS');

/**
 * The link changes a request makes, each followed by its events once the shard acknowledged it
 * (docs/design.md, "Link events"): the audit entry, then the webhook event, whichever API asked (the
 * link API, the compatibility APIs, the operators' moderation). A change that fails emits nothing.
 * Reads go to LinkService itself. `Context` is who asked (the request's audit context).
 */
export class LinkCommands<Context> {
  constructor(
    private readonly links: Pick<LinkService, 'create' | 'updateWithPrevious' | 'remove' | 'moderateWithPrevious'>,
    private readonly events: LinkChangeHooks<Context>,
  ) {}

  async create(context: Context, input: LinkCreation): Promise<Link> {
    const link = await this.links.create(input);
    await this.events.created(context, link);
    return link;
  }

  /** `ifMatch`: the version the caller read (null: whatever the link holds). */
  async edit(context: Context, tenantId: string, id: ShortUrlIdentifier, edit: LinkEdit, ifMatch: number | null): Promise<LinkUpdate> {
    const change = await this.links.updateWithPrevious(tenantId, id, edit, ifMatch);
    await this.events.edited(context, change);
    return change;
  }

  async remove(context: Context, tenantId: string, id: ShortUrlIdentifier, ifMatch: number | null): Promise<void> {
    await this.links.remove(tenantId, id, ifMatch);
    await this.events.deleted(context, tenantId, id);
  }

  /** An operator's moderation of any tenant's link. */
  async moderate(context: Context, id: ShortUrlIdentifier, moderation: Moderation, reason: string | null): Promise<LinkUpdate> {
    const change = await this.links.moderateWithPrevious(id, moderation, reason);
    await this.events.moderated(context, change);
    return change;
  }

  /** A batch request ended (its rows stream out as they are written, so only its end has counts). */
  batchEnded(context: Context, tenantId: string, counts: LinkCounts): Promise<void> {
    return this.events.batch(context, tenantId, counts);
  }

  /** A bulk edit (`edit` given) or delete ended. */
  bulkEnded(context: Context, tenantId: string, edit: LinkEdit | null, counts: LinkCounts, selection: BulkChangeSelection): Promise<void> {
    return this.events.bulk(context, tenantId, edit, counts, selection);
  }
}
