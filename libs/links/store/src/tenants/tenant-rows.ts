import { ApiKey, KeyWithTenant, Plan, Scope, SCOPES, Tenant, TenantStatus } from '@shortlink/tenants-domain';
import { toDate } from '../rows';

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
}

/** Columns of a tenant, and of a key, as both SQL backends select them. */
export const TENANT_COLUMNS = 'id, name, plan, status, created_at';
export const KEY_COLUMNS = 'id, tenant_id, name, prefix, scopes, created_at, expires_at, revoked_at';

/** A key neither revoked nor expired as of the one parameter (the time), for both backends. */
export const ACTIVE_KEY = 'revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)';

/** A key and its tenant in one read: the key's columns as they are, the tenant's prefixed `t_`. */
export const KEY_WITH_TENANT_SELECT = `SELECT k.id, k.tenant_id, k.name, k.prefix, k.scopes, k.created_at, k.expires_at, k.revoked_at,
  t.name AS t_name, t.plan AS t_plan, t.status AS t_status, t.created_at AS t_created_at
  FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.key_hash = ?`;

export type KeyWithTenantRow = KeyRow & { t_name: string; t_plan: Plan; t_status: TenantStatus; t_created_at: DbDate };

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
});

export const keyWithTenantFromRow = (row: KeyWithTenantRow): KeyWithTenant => ({
  key: keyFromRow(row),
  tenant: tenantFromRow({ id: row.tenant_id, name: row.t_name, plan: row.t_plan, status: row.t_status, created_at: row.t_created_at }),
});

/** A tenant change as SQL: the `SET` list and its values, in one order for both backends. */
export function tenantChangeSql(change: { readonly plan?: Plan; readonly status?: TenantStatus; readonly name?: string }): { set: string; values: string[] } {
  const entries = Object.entries(change).filter(([, v]) => v !== undefined) as Array<[string, string]>;
  return { set: entries.map(([k]) => `${k} = ?`).join(', '), values: entries.map(([, v]) => v) };
}
