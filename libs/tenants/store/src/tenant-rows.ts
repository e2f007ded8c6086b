import { ApiKey, isRole, KeyPerson, KeyWithTenant, Plan, Scope, SCOPES, Tenant, TenantStatus } from '@shortlink/tenants-domain';
import { toDate } from '@shortlink/sql';

type DbDate = Date | number | string;

export interface TenantRow {
  id: string;
  name: string;
  plan: Plan;
  status: TenantStatus;
  created_at: DbDate;
}

export interface KeyRow {
  id: string;
  tenant_id: string;
  name: string;
  prefix: string;
  scopes: string;
  created_at: DbDate;
  expires_at: DbDate | null;
  revoked_at: DbDate | null;
  member_id: string | null;
  /** The key's person, joined: null without one, or when it is no longer an active member. */
  m_email: string | null;
  m_role: string | null;
}

/** Columns of a tenant as both SQL backends select them. */
export const TENANT_COLUMNS = 'id, name, plan, status, created_at';

/** A tenant has an active owner (the tenant's id is the one parameter). */
export const HAS_ACTIVE_OWNER = "EXISTS (SELECT 1 FROM members o WHERE o.tenant_id = ? AND o.role = 'owner' AND o.status = 'active')";

/**
 * A key's columns with its person as it is now (`k` the key, `m` the member; a member removed, or
 * of another tenant, joins as nothing: the key is suspended), for both backends.
 */
const KEY_WITH_PERSON = `k.id, k.tenant_id, k.name, k.prefix, k.scopes, k.created_at, k.expires_at, k.revoked_at, k.member_id,
  m.email AS m_email, m.role AS m_role`;
const PERSON_JOIN = "LEFT JOIN members m ON m.id = k.member_id AND m.tenant_id = k.tenant_id AND m.status = 'active'";

/** An unrevoked key of a tenant with its person (tenant id and key id). */
export const UNREVOKED_KEY = `SELECT ${KEY_WITH_PERSON} FROM api_keys k ${PERSON_JOIN} WHERE k.tenant_id = ? AND k.id = ? AND k.revoked_at IS NULL`;
/** An active member of a tenant as a key's person (tenant id and member id). */
export const ACTIVE_MEMBER = "SELECT id, email, role FROM members WHERE tenant_id = ? AND id = ? AND status = 'active'";
export type ActiveMemberRow = { id: string; email: string; role: string };
export const keyPersonFromRow = (row: ActiveMemberRow): KeyPerson | null => (isRole(row.role) ? { id: row.id, email: row.email, role: row.role } : null);

/** A tenant's keys with their persons, oldest first (the tenant's id is the one parameter). */
export const KEYS_OF_TENANT = `SELECT ${KEY_WITH_PERSON} FROM api_keys k ${PERSON_JOIN} WHERE k.tenant_id = ? ORDER BY k.created_at, k.id`;

/** A key neither revoked nor expired as of the one parameter (the time), for both backends. */
export const ACTIVE_KEY = 'revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)';

/**
 * A key, its person and its tenant in one read (one per authentication): the key's columns as they
 * are, the tenant's prefixed `t_`, whether the tenant has an active owner. Found by `where`.
 */
const keyWithTenantSelect = (where: string) => `SELECT ${KEY_WITH_PERSON},
  t.name AS t_name, t.plan AS t_plan, t.status AS t_status, t.created_at AS t_created_at,
  ${HAS_ACTIVE_OWNER.replace('?', 'k.tenant_id')} AS t_has_owner
  FROM api_keys k JOIN tenants t ON t.id = k.tenant_id ${PERSON_JOIN} WHERE ${where}`;
/** By the key's hash (one parameter). */
export const KEY_WITH_TENANT_SELECT = keyWithTenantSelect('k.key_hash = ?');
/** By the tenant and the key's id (two parameters). */
export const KEY_BY_ID_SELECT = keyWithTenantSelect('k.tenant_id = ? AND k.id = ?');

export type KeyWithTenantRow = KeyRow & { t_name: string; t_plan: Plan; t_status: TenantStatus; t_created_at: DbDate; t_has_owner: number | string | bigint };

export const tenantFromRow = (row: TenantRow): Tenant => ({
  id: row.id,
  name: row.name,
  plan: row.plan,
  status: row.status,
  createdAt: toDate(row.created_at),
});

/** Scopes are stored space-separated; a scope this version does not know is dropped, never granted. */
export const scopesToDb = (scopes: readonly Scope[]): string => scopes.join(' ');

export const keyFromRow = (row: KeyRow): ApiKey => ({
  id: row.id,
  tenantId: row.tenant_id,
  name: row.name,
  prefix: row.prefix,
  scopes: row.scopes.split(' ').filter((s): s is Scope => (SCOPES as readonly string[]).includes(s)),
  createdAt: toDate(row.created_at),
  expiresAt: row.expires_at === null ? null : toDate(row.expires_at),
  revokedAt: row.revoked_at === null ? null : toDate(row.revoked_at),
  memberId: row.member_id,
  person: personFromRow(row),
});

/** A role this version does not know is no person at all: the key is suspended rather than given a role's scopes. */
function personFromRow(row: KeyRow): KeyPerson | null {
  if (row.member_id === null || row.m_email === null || !isRole(row.m_role)) return null;
  return { id: row.member_id, email: row.m_email, role: row.m_role };
}

export const keyWithTenantFromRow = (row: KeyWithTenantRow): KeyWithTenant => ({
  key: keyFromRow(row),
  tenant: tenantFromRow({ id: row.tenant_id, name: row.t_name, plan: row.t_plan, status: row.t_status, created_at: row.t_created_at }),
  tenantHasOwner: Number(row.t_has_owner) === 1,
});

/** A tenant change as SQL: the `SET` list and its values, in one order for both backends. */
export function tenantChangeSql(change: { readonly plan?: Plan; readonly status?: TenantStatus; readonly name?: string }): { set: string; values: string[] } {
  const entries = Object.entries(change).filter(([, v]) => v !== undefined) as Array<[string, string]>;
  return { set: entries.map(([k]) => `${k} = ?`).join(', '), values: entries.map(([, v]) => v) };
}
