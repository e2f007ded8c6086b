import type { Link, ShortUrlIdentifier } from './link';
import type { LinkEdit, LinkUpdate } from './link-service';

/** What a bulk or batch request did: links changed, and links it could not change. */
export interface LinkCounts {
  readonly count: number;
  readonly failed: number;
}

/** What selected the links of a bulk change. */
export interface BulkChangeSelection {
  readonly tag?: string;
  readonly domain?: string;
}

/**
 * What follows a link change once the shard acknowledged it (its audit entry and its platform
 * event): the generation app binds one, so that routes outside its link API (the compatibility
 * APIs) record their changes exactly as the link API does. `Context` is the request's audit context.
 */
export interface LinkChangeHooks<Context> {
  created(context: Context, link: Link): Promise<void>;
  edited(context: Context, change: LinkUpdate): Promise<void>;
  deleted(context: Context, tenantId: string, id: ShortUrlIdentifier): Promise<void>;
  /** A batch request: how many links it created and how many rows failed. */
  batch(context: Context, tenantId: string, counts: LinkCounts): Promise<void>;
  /** A bulk edit (`edit` given) or delete. */
  bulk(context: Context, tenantId: string, edit: LinkEdit | null, counts: LinkCounts, selection: BulkChangeSelection): Promise<void>;
  /** An operator's moderation of any tenant's link. */
  moderated(context: Context, change: LinkUpdate): Promise<void>;
}

export const LINK_CHANGE_HOOKS = Symbol('LINK_CHANGE_HOOKS');

/** Several hooks as one, each called in turn (the audit entry before the webhook event). */
export function everyHook<Context>(...hooks: ReadonlyArray<LinkChangeHooks<Context>>): LinkChangeHooks<Context> {
  const each =
    <A extends unknown[]>(call: (hook: LinkChangeHooks<Context>, ...args: A) => Promise<void>) =>
    async (...args: A) => {
      for (const hook of hooks) await call(hook, ...args);
    };
  return {
    created: each((h, context: Context, link: Link) => h.created(context, link)),
    edited: each((h, context: Context, change: LinkUpdate) => h.edited(context, change)),
    deleted: each((h, context: Context, tenantId: string, id: ShortUrlIdentifier) => h.deleted(context, tenantId, id)),
    batch: each((h, context: Context, tenantId: string, counts: LinkCounts) => h.batch(context, tenantId, counts)),
    bulk: each((h, context: Context, tenantId: string, edit: LinkEdit | null, counts: LinkCounts, selection: BulkChangeSelection) =>
      h.bulk(context, tenantId, edit, counts, selection),
    ),
    moderated: each((h, context: Context, change: LinkUpdate) => h.moderated(context, change)),
  };
}
