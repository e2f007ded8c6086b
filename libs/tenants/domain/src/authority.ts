import type { Principal } from './credentials';
import type { ApiKey, Scope } from './tenant';

/**
 * Who may do what in a tenant (docs/design.md, "Security model"): a person by role, a key never
 * more than the person it acts for. The one place the rules are written; the guard, the key
 * service and the member service ask here.
 */

/** A member's role (docs/design.md, "People and sessions"). */
export const ROLES = ['owner', 'admin', 'editor', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const isRole = (value: unknown): value is Role => ROLES.includes(value as Role);

/**
 * What a person signed in may do: each role is a set of the scopes keys use, so that one guard
 * decides for keys and people alike. `admin` holds what `owner` holds; what sets them apart is
 * whom they may manage (an admin never grants, changes or removes an owner, nor ends an owner's key).
 */
export const ROLE_SCOPES: Readonly<Record<Role, readonly Scope[]>> = {
  owner: ['links:read', 'links:write', 'analytics:read', 'audit:read', 'members:write', 'keys:write', 'conversions:write'],
  admin: ['links:read', 'links:write', 'analytics:read', 'audit:read', 'members:write', 'keys:write', 'conversions:write'],
  editor: ['links:read', 'links:write', 'analytics:read', 'keys:write', 'conversions:write'],
  viewer: ['links:read', 'analytics:read'],
};

/**
 * The most a key acting for a person of this role holds, at creation and at every use: the role's
 * own scopes, but `members:write` only under an owner. Member and single sign-on changes need a
 * person, or a key an owner made (docs/design.md, "Security model").
 */
export const KEY_CEILING: Readonly<Record<Role, readonly Scope[]>> = {
  owner: ROLE_SCOPES.owner,
  admin: ROLE_SCOPES.admin.filter((s) => s !== 'members:write'),
  editor: ROLE_SCOPES.editor,
  viewer: ROLE_SCOPES.viewer,
};

/**
 * What a key of no person (the tenant's first key, made by the operator, and keys made by such
 * keys) may still use once the tenant has an active owner: links, analytics and the audit log.
 * Key and member management then go through a person; an owner adopts such a key by transferring it.
 */
export const TENANT_KEY_SCOPES: readonly Scope[] = ['links:read', 'links:write', 'analytics:read', 'audit:read', 'conversions:write'];

/** The member a key acts for, as it is now: its maker, or whom an owner transferred the key to. */
export interface KeyPerson {
  readonly id: string;
  readonly email: string;
  readonly role: Role;
}

/** A key now: what it may do, or suspended because the person it acted for is no longer a member. */
export type KeyStanding = { readonly suspended: true } | { readonly suspended: false; readonly scopes: readonly Scope[] };

/**
 * What a key may do now (checked at every use, so a demotion lowers its keys within the key cache's
 * second): its own scopes within its person's KEY_CEILING; suspended when that person was removed.
 * A key of no person: every scope it holds while the tenant has no active owner (so that it can
 * invite the first one), TENANT_KEY_SCOPES of them after. An operator's key (`admin`) is not bound
 * by the tenant's people.
 */
export function keyStanding(key: Pick<ApiKey, 'scopes' | 'memberId' | 'person'>, tenantHasOwner: boolean): KeyStanding {
  if (key.memberId !== null) {
    if (key.person === null) return { suspended: true };
    const ceiling = KEY_CEILING[key.person.role];
    return { suspended: false, scopes: key.scopes.filter((s) => ceiling.includes(s)) };
  }
  if (!tenantHasOwner || key.scopes.includes('admin')) return { suspended: false, scopes: key.scopes };
  return { suspended: false, scopes: key.scopes.filter((s) => TENANT_KEY_SCOPES.includes(s)) };
}

/**
 * Who manages members and keys: a person by its role, signed in or through a key acting for it;
 * or a key of no person (`kind: 'key'`), owner-level, which holds `members:write` or `keys:write`
 * only while its tenant has no active owner, or as the operator's key.
 */
export type Manager = { readonly kind: 'key' } | { readonly kind: 'person'; readonly memberId: string; readonly role: Role };

/** The manager a request acts as: the person signed in, the person its key acts for, or a key of no person. */
export function managerOf(principal: Principal): Manager {
  const actor = principal.actor;
  if (actor.kind === 'person') {
    if (!isRole(actor.role)) throw new Error(`person ${actor.id} has no known role`);
    return { kind: 'person', memberId: actor.id, role: actor.role };
  }
  return actor.person ? { kind: 'person', memberId: actor.person.id, role: actor.person.role } : { kind: 'key' };
}

/** Whether `manager` may give `role`, or change or remove a member who holds it: only owners (and owner-level keys) touch owners. */
export function mayManageRole(manager: Manager, role: Role): boolean {
  if (manager.kind === 'key' || manager.role === 'owner') return true;
  return manager.role === 'admin' && role !== 'owner';
}

/**
 * Whether `manager` may revoke `key`: its own keys (those acting for it), any key for an owner, and
 * for an admin the keys acting for members it may manage and suspended ones (whose person is gone).
 * A key of no person is owner-level: an admin may not end it. Editors and viewers manage only
 * their own. The key service checks the scopes as well (a key never takes away more than it has).
 */
export function mayManageKey(manager: Manager, key: Pick<ApiKey, 'memberId' | 'person'>): boolean {
  if (manager.kind === 'key' || manager.role === 'owner') return true;
  if (key.memberId !== null && key.memberId === manager.memberId) return true;
  if (manager.role !== 'admin' || key.memberId === null) return false;
  return key.person === null || mayManageRole(manager, key.person.role);
}

/** Whether `manager` may hand keys over to another member: owners (and owner-level keys) only. */
export const mayTransferKeys = (manager: Manager): boolean => manager.kind === 'key' || manager.role === 'owner';
