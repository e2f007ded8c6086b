import { Link } from '@shortlink/links-domain';

/** Column names shared by both SQL backends; status is stored as a small integer. */
export const STATUS_TO_DB = { active: 1, disabled: 2 } as const;
export const STATUS_FROM_DB: Record<number, Link['status']> = { 1: 'active', 2: 'disabled' };

export interface LinkRow {
  id: string | number | bigint;
  domain: string;
  code: string;
  target_url: string;
  tenant_id: string;
  created_at: Date | number | string;
  expires_at: Date | number | string | null;
  status: number;
  redirect_type: number;
}

const toDate = (v: Date | number | string): Date => (v instanceof Date ? v : new Date(typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v));

export function linkFromRow(row: LinkRow): Link {
  return {
    id: String(row.id),
    domain: row.domain,
    code: row.code,
    targetUrl: row.target_url,
    tenantId: row.tenant_id,
    createdAt: toDate(row.created_at),
    expiresAt: row.expires_at === null ? null : toDate(row.expires_at),
    status: STATUS_FROM_DB[Number(row.status)] ?? 'disabled',
    redirectType: Number(row.redirect_type) === 301 ? 301 : 302,
  };
}
