import type { Link, ShortUrlIdentifier } from './link';
import type { LinkUpdate } from './link-service';

/**
 * What follows a link change once the shard acknowledged it (the audit entry and the platform
 * event): the generation app binds its own, so that routes outside its link API (the compatibility
 * APIs) record their changes exactly as the link API does. `Context` is the request's audit context.
 */
export interface LinkChangeHooks<Context> {
  created(context: Context, link: Link): Promise<void>;
  edited(context: Context, change: LinkUpdate): Promise<void>;
  deleted(context: Context, tenantId: string, id: ShortUrlIdentifier): Promise<void>;
}

export const LINK_CHANGE_HOOKS = Symbol('LINK_CHANGE_HOOKS');
