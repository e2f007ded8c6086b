import { Link, NO_OPTIONS } from '../link';

let nextId = 1000n;

/** A plain link of `code` (every option at its default, version 1, a fresh id), anything else as `over` says: for specs. */
export function aTestLink(code: string, over: Partial<Link> = {}): Link {
  const at = new Date(Date.UTC(2026, 11, 3));
  return {
    ...NO_OPTIONS,
    id: String(nextId++),
    domain: 'sho.rt',
    code,
    targetUrl: `https://example.com/${code}`,
    tenantId: 't1',
    createdAt: at,
    updatedAt: at,
    expiresAt: null,
    status: 'active',
    redirectType: 302,
    version: 1,
    moderation: 'clear',
    moderationReason: null,
    ...over,
  };
}
