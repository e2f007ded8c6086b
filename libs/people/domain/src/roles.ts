import type { Scope } from '@shortlink/tenants-domain';

/**
 * A member's role (docs/design.md, "People and sessions"): each is a set of the scopes keys already
 * use, so that one guard decides for keys and people alike. `admin` holds what `owner` holds; what
 * sets them apart is whom they may manage (an admin never grants, changes or removes an owner).
 */
export const ROLES = ['owner', 'admin', 'editor', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const ROLE_SCOPES: Readonly<Record<Role, readonly Scope[]>> = {
  owner: ['links:read', 'links:write', 'analytics:read', 'audit:read', 'members:write'],
  admin: ['links:read', 'links:write', 'analytics:read', 'audit:read', 'members:write'],
  editor: ['links:read', 'links:write', 'analytics:read'],
  viewer: ['links:read', 'analytics:read'],
};

export const isRole = (value: unknown): value is Role => ROLES.includes(value as Role);

/**
 * Who manages members: a key with `members:write` (the tenant's first key has it, so a tenant
 * without people can invite its first owner) acts with an owner's authority; a person by its role.
 */
export type MemberManager = { readonly kind: 'key' } | { readonly kind: 'person'; readonly memberId: string; readonly role: Role };

/** Whether `manager` may give `role`, or change or remove a member who holds it: only owners (and keys) touch owners. */
export function mayManageRole(manager: MemberManager, role: Role): boolean {
  if (manager.kind === 'key') return true;
  if (manager.role === 'owner') return true;
  return manager.role === 'admin' && role !== 'owner';
}
