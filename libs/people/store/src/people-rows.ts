import {
  boundedSessionClient,
  type Member,
  type MemberStatus,
  type NewMember,
  type Role,
  type Session,
  type SessionClient,
  type SessionWithMember,
  type SignInCandidate,
} from '@shortlink/people-domain';
import type { Plan, TenantStatus } from '@shortlink/tenants-domain';
import { toDate } from '@shortlink/sql';

type DbDate = Date | number | string;

export interface MemberRow {
  id: string;
  tenant_id: string;
  email: string;
  role: Role;
  status: MemberStatus;
  created_at: DbDate;
  invitation_expires_at: DbDate | null;
}

/** Columns of a member as both backends select them (the secrets' hashes apart). */
export const MEMBER_COLUMNS = 'id, tenant_id, email, role, status, created_at, invitation_expires_at';
const m = (alias: string) =>
  MEMBER_COLUMNS.split(', ')
    .map((c) => `${alias}.${c}`)
    .join(', ');

/** The tenant's columns beside a member's, prefixed `t_`. */
const TENANT_BESIDE = 't.name AS t_name, t.plan AS t_plan, t.status AS t_status, t.created_at AS t_created_at';
type TenantBeside = { t_name: string; t_plan: Plan; t_status: TenantStatus; t_created_at: DbDate };

export const SIGN_IN_SELECT = `SELECT ${m('m')}, m.password_hash, ${TENANT_BESIDE}
  FROM members m JOIN tenants t ON t.id = m.tenant_id
  WHERE m.email = ? AND m.status = 'active' AND m.password_hash IS NOT NULL ORDER BY m.created_at, m.id LIMIT 20`;
export type SignInRow = MemberRow & TenantBeside & { password_hash: string };

export const SESSION_SELECT = `SELECT s.id_hash, s.created_at AS s_created_at, s.last_seen_at, s.expires_at, s.client AS s_client, ${m('m')}, ${TENANT_BESIDE}
  FROM member_sessions s JOIN members m ON m.id = s.member_id JOIN tenants t ON t.id = m.tenant_id
  WHERE s.id_hash = ? AND m.status = 'active'`;
export type SessionRow = MemberRow &
  TenantBeside & { id_hash: string; s_created_at: DbDate; last_seen_at: DbDate; expires_at: DbDate; s_client: string | null };

/** A session's client as its column holds it: JSON of the parts, each cut to MAX_SESSION_CLIENT_PART (the column takes 1024 characters). */
export const clientColumn = (client: SessionClient | null | undefined): string | null => {
  const bounded = boundedSessionClient(client);
  return bounded && JSON.stringify(bounded);
};

/** The column read back; anything unreadable is no client rather than a failed listing. */
export const clientOf = (text: string | null): SessionClient | null => {
  if (!text) return null;
  try {
    return boundedSessionClient(JSON.parse(text) as Record<string, unknown>);
  } catch {
    return null;
  }
};

export const memberFromRow = (row: MemberRow): Member => ({
  id: row.id,
  tenantId: row.tenant_id,
  email: row.email,
  role: row.role,
  status: row.status,
  createdAt: toDate(row.created_at),
  invitationExpiresAt: row.invitation_expires_at === null ? null : toDate(row.invitation_expires_at),
});

const tenantBeside = (row: MemberRow & TenantBeside) => ({
  id: row.tenant_id,
  name: row.t_name,
  plan: row.t_plan,
  status: row.t_status,
  createdAt: toDate(row.t_created_at),
});

export const candidateFromRow = (row: SignInRow): SignInCandidate => ({
  member: memberFromRow(row),
  passwordHash: row.password_hash,
  tenant: tenantBeside(row),
});

export const sessionFromRow = (row: SessionRow): SessionWithMember => {
  const member = memberFromRow(row);
  const session: Session = {
    idHash: row.id_hash,
    memberId: member.id,
    tenantId: member.tenantId,
    createdAt: toDate(row.s_created_at),
    lastSeenAt: toDate(row.last_seen_at),
    expiresAt: toDate(row.expires_at),
    client: clientOf(row.s_client),
  };
  return { session, member, tenant: tenantBeside(row) };
};

export const INSERT_MEMBER = `INSERT INTO members (id, tenant_id, email, role, status, created_at, updated_at, invitation_hash, invitation_expires_at)
  VALUES (?, ?, ?, ?, 'invited', ?, ?, ?, ?)`;
export const memberInsertParams = (member: NewMember, time: (d: Date) => Date | number) => [
  member.id,
  member.tenantId,
  member.email,
  member.role,
  time(member.createdAt),
  time(member.createdAt),
  member.invitationHash,
  time(member.invitationExpiresAt),
];

/** Whether a change leaves the tenant without an active owner: `owners` counted under the change's lock. */
export const leavesNoOwner = (before: Member, role: Role | null, owners: number) =>
  before.role === 'owner' && before.status === 'active' && role !== 'owner' && owners <= 1;

export const ACTIVE_OWNERS = "SELECT COUNT(*) AS n FROM members WHERE tenant_id = ? AND role = 'owner' AND status = 'active'";

/** The second factor's statements, the same on both backends (the upsert of a pending secret apart). */
export const SECOND_FACTOR_SELECT = 'SELECT secret, pending, last_step FROM member_second_factors WHERE member_id = ?';
export type SecondFactorRow = { secret: string | null; pending: string | null; last_step: number | string | null };
export const secondFactorFromRow = (row: SecondFactorRow) => ({
  secret: row.secret,
  pending: row.pending,
  lastStep: row.last_step === null ? null : Number(row.last_step),
});
export const ENABLE_SECOND_FACTOR =
  'UPDATE member_second_factors SET secret = pending, pending = NULL, last_step = ?, updated_at = ? WHERE member_id = ? AND pending = ?';
export const USE_SECOND_FACTOR_STEP =
  'UPDATE member_second_factors SET last_step = ? WHERE member_id = ? AND secret IS NOT NULL AND (last_step IS NULL OR last_step < ?)';
export const USE_RECOVERY_CODE = 'DELETE FROM member_recovery_codes WHERE member_id = ? AND code_hash = ?';
export const recoveryInsert = (memberId: string, hashes: readonly string[]) => ({
  sql: `INSERT INTO member_recovery_codes (member_id, code_hash) VALUES ${hashes.map(() => '(?, ?)').join(', ')}`,
  params: hashes.flatMap((h) => [memberId, h]),
});
/** What goes with a member when it is removed, before its own row. */
export const MEMBER_DEPENDENTS = ['member_sessions', 'member_second_factors', 'member_recovery_codes'] as const;

export const SESSIONS_OF =
  'SELECT id_hash, member_id, tenant_id, created_at, last_seen_at, expires_at, client FROM member_sessions WHERE member_id = ? ORDER BY created_at DESC, id_hash DESC';
export type PlainSessionRow = {
  id_hash: string;
  member_id: string;
  tenant_id: string;
  created_at: DbDate;
  last_seen_at: DbDate;
  expires_at: DbDate;
  client: string | null;
};
export const INSERT_SESSION =
  'INSERT INTO member_sessions (id_hash, member_id, tenant_id, created_at, last_seen_at, expires_at, client) VALUES (?, ?, ?, ?, ?, ?, ?)';
export const plainSessionFromRow = (r: PlainSessionRow): Session => ({
  idHash: r.id_hash,
  memberId: r.member_id,
  tenantId: r.tenant_id,
  createdAt: toDate(r.created_at),
  lastSeenAt: toDate(r.last_seen_at),
  expiresAt: toDate(r.expires_at),
  client: clientOf(r.client),
});
/** Deletes a session, and with a second parameter only that member's. */
export const deleteSessionSql = (memberId?: string) =>
  memberId === undefined
    ? { sql: 'DELETE FROM member_sessions WHERE id_hash = ?', extra: [] as string[] }
    : { sql: 'DELETE FROM member_sessions WHERE id_hash = ? AND member_id = ?', extra: [memberId] };
