import { DataSource } from 'typeorm';
import type { AuditEntry } from '@shortlink/audit-domain';
import type {
  Member,
  MemberChangeDecision,
  MemberChangeOutcome,
  NewMember,
  PeopleStore,
  Role,
  SecondFactorState,
  Session,
  SessionWithMember,
  SignInCandidate,
} from '@shortlink/people-domain';
import { insertAuditEntriesMysql } from '@shortlink/audit-store';
import { isMysqlDuplicate } from '@shortlink/sql';
import {
  ACTIVE_OWNERS,
  candidateFromRow,
  deleteSessionSql,
  PlainSessionRow,
  plainSessionFromRow,
  SESSIONS_OF,
  ENABLE_SECOND_FACTOR,
  MEMBER_DEPENDENTS,
  recoveryInsert,
  SECOND_FACTOR_SELECT,
  secondFactorFromRow,
  SecondFactorRow,
  USE_RECOVERY_CODE,
  USE_SECOND_FACTOR_STEP,
  INSERT_MEMBER,
  leavesNoOwner,
  MEMBER_COLUMNS,
  memberFromRow,
  memberInsertParams,
  MemberRow,
  SESSION_SELECT,
  sessionFromRow,
  SessionRow,
  SIGN_IN_SELECT,
  SignInRow,
  INSERT_SESSION,
  clientColumn,
} from './people-rows';

const asIs = (d: Date) => d;
type Affected = { affectedRows: number };

/**
 * Members and sessions in the MySQL meta database (the migrations are the meta store's). A change
 * to a member locks its tenant's row first, so the last owner is kept against concurrent changes on
 * every instance (docs/design.md, "People and sessions").
 */
export class MysqlPeopleStore implements PeopleStore {
  constructor(private readonly ds: DataSource) {}

  async invite(member: NewMember, audit?: AuditEntry): Promise<boolean> {
    try {
      await this.ds.transaction(async (m) => {
        await m.query(INSERT_MEMBER, memberInsertParams(member, asIs));
        await insertAuditEntriesMysql(m, [audit]);
      });
      return true;
    } catch (error) {
      if (isMysqlDuplicate(error)) return false;
      throw error;
    }
  }

  async listMembers(tenantId: string): Promise<Member[]> {
    const rows: MemberRow[] = await this.ds.query(`SELECT ${MEMBER_COLUMNS} FROM members WHERE tenant_id = ? ORDER BY created_at, id`, [tenantId]);
    return rows.map(memberFromRow);
  }

  async findMember(tenantId: string, memberId: string): Promise<Member | null> {
    const rows: MemberRow[] = await this.ds.query(`SELECT ${MEMBER_COLUMNS} FROM members WHERE tenant_id = ? AND id = ?`, [tenantId, memberId]);
    return rows.length ? memberFromRow(rows[0]) : null;
  }

  async changeRole(tenantId: string, memberId: string, role: Role, decide: MemberChangeDecision): Promise<MemberChangeOutcome> {
    return this.change(tenantId, memberId, role, decide);
  }

  async removeMember(tenantId: string, memberId: string, decide: MemberChangeDecision): Promise<MemberChangeOutcome> {
    return this.change(tenantId, memberId, null, decide);
  }

  async findInvitation(invitationHash: string, now: Date): Promise<Member | null> {
    const rows: MemberRow[] = await this.ds.query(
      `SELECT ${MEMBER_COLUMNS} FROM members WHERE invitation_hash = ? AND status = 'invited' AND invitation_expires_at > ?`,
      [invitationHash, now],
    );
    return rows.length ? memberFromRow(rows[0]) : null;
  }

  async acceptInvitation(invitationHash: string, passwordHash: string, now: Date, audit: (member: Member) => AuditEntry): Promise<Member | null> {
    return this.ds.transaction(async (m) => {
      const rows: MemberRow[] = await m.query(
        `SELECT ${MEMBER_COLUMNS} FROM members WHERE invitation_hash = ? AND status = 'invited' AND invitation_expires_at > ? FOR UPDATE`,
        [invitationHash, now],
      );
      if (!rows.length) return null;
      await m.query(
        "UPDATE members SET status = 'active', password_hash = ?, invitation_hash = NULL, invitation_expires_at = NULL, updated_at = ? WHERE id = ?",
        [passwordHash, now, rows[0].id],
      );
      const member: Member = { ...memberFromRow(rows[0]), status: 'active', invitationExpiresAt: null };
      await insertAuditEntriesMysql(m, [audit(member)]);
      return member;
    });
  }

  async signInCandidates(email: string): Promise<SignInCandidate[]> {
    return ((await this.ds.query(SIGN_IN_SELECT, [email])) as SignInRow[]).map(candidateFromRow);
  }

  async passwordHashOf(memberId: string): Promise<string | null> {
    const rows: Array<{ password_hash: string | null }> = await this.ds.query('SELECT password_hash FROM members WHERE id = ?', [memberId]);
    return rows[0]?.password_hash ?? null;
  }

  async changePassword(memberId: string, passwordHash: string, keepSessionHash: string | null, audit: AuditEntry): Promise<number> {
    return this.ds.transaction(async (m) => {
      await m.query('UPDATE members SET password_hash = ?, updated_at = ? WHERE id = ?', [passwordHash, new Date(), memberId]);
      const ended: Affected = await m.query('DELETE FROM member_sessions WHERE member_id = ? AND id_hash <> ?', [memberId, keepSessionHash ?? '']);
      await insertAuditEntriesMysql(m, [audit]);
      return ended.affectedRows;
    });
  }

  async createSession(s: Session): Promise<void> {
    await this.ds.query(INSERT_SESSION, [s.idHash, s.memberId, s.tenantId, s.createdAt, s.lastSeenAt, s.expiresAt, clientColumn(s.client)]);
  }

  async findSession(idHash: string): Promise<SessionWithMember | null> {
    const rows: SessionRow[] = await this.ds.query(SESSION_SELECT, [idHash]);
    return rows.length ? sessionFromRow(rows[0]) : null;
  }

  async touchSession(idHash: string, at: Date): Promise<void> {
    await this.ds.query('UPDATE member_sessions SET last_seen_at = ? WHERE id_hash = ? AND last_seen_at < ?', [at, idHash, at]);
  }

  async listSessions(memberId: string): Promise<Session[]> {
    return ((await this.ds.query(SESSIONS_OF, [memberId])) as PlainSessionRow[]).map(plainSessionFromRow);
  }

  async deleteSession(idHash: string, memberId?: string): Promise<boolean> {
    const { sql, extra } = deleteSessionSql(memberId);
    return ((await this.ds.query(sql, [idHash, ...extra])) as Affected).affectedRows === 1;
  }

  async purgeSessions(now: Date, idleBefore: Date, limit: number): Promise<number> {
    const result: { affectedRows: number } = await this.ds.query('DELETE FROM member_sessions WHERE expires_at <= ? OR last_seen_at < ? LIMIT ?', [
      now,
      idleBefore,
      limit,
    ]);
    return result.affectedRows;
  }

  async setPendingSecondFactor(memberId: string, sealedSecret: string): Promise<void> {
    await this.ds.query(
      'INSERT INTO member_second_factors (member_id, pending, updated_at) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE pending = VALUES(pending), updated_at = VALUES(updated_at)',
      [memberId, sealedSecret, new Date()],
    );
  }

  async secondFactorOf(memberId: string): Promise<SecondFactorState | null> {
    const rows: SecondFactorRow[] = await this.ds.query(SECOND_FACTOR_SELECT, [memberId]);
    return rows.length ? secondFactorFromRow(rows[0]) : null;
  }

  async enableSecondFactor(memberId: string, pending: string, step: number, recoveryHashes: readonly string[]): Promise<boolean> {
    return this.ds.transaction(async (m) => {
      const result: Affected = await m.query(ENABLE_SECOND_FACTOR, [step, new Date(), memberId, pending]);
      if (result.affectedRows !== 1) return false;
      await m.query('DELETE FROM member_recovery_codes WHERE member_id = ?', [memberId]);
      const { sql, params } = recoveryInsert(memberId, recoveryHashes);
      if (recoveryHashes.length) await m.query(sql, params);
      return true;
    });
  }

  async useSecondFactorStep(memberId: string, step: number): Promise<boolean> {
    return ((await this.ds.query(USE_SECOND_FACTOR_STEP, [step, memberId, step])) as Affected).affectedRows === 1;
  }

  async useRecoveryCode(memberId: string, codeHash: string): Promise<boolean> {
    return ((await this.ds.query(USE_RECOVERY_CODE, [memberId, codeHash])) as Affected).affectedRows === 1;
  }

  async disableSecondFactor(memberId: string): Promise<void> {
    await this.ds.transaction(async (m) => {
      await m.query('DELETE FROM member_second_factors WHERE member_id = ?', [memberId]);
      await m.query('DELETE FROM member_recovery_codes WHERE member_id = ?', [memberId]);
    });
  }

  private change(tenantId: string, memberId: string, role: Role | null, decide: MemberChangeDecision): Promise<MemberChangeOutcome> {
    return this.ds.transaction(async (m): Promise<MemberChangeOutcome> => {
      await m.query('SELECT id FROM tenants WHERE id = ? FOR UPDATE', [tenantId]);
      const rows: MemberRow[] = await m.query(`SELECT ${MEMBER_COLUMNS} FROM members WHERE tenant_id = ? AND id = ?`, [tenantId, memberId]);
      if (!rows.length) return { outcome: 'not_found' };
      const before = memberFromRow(rows[0]);
      const decision = decide(before);
      if (decision.refuse) return { outcome: 'refused' };
      const [{ n }]: Array<{ n: string | number }> = await m.query(ACTIVE_OWNERS, [tenantId]);
      if (leavesNoOwner(before, role, Number(n))) return { outcome: 'last_owner' };
      if (role === null) {
        for (const table of MEMBER_DEPENDENTS) await m.query(`DELETE FROM ${table} WHERE member_id = ?`, [memberId]);
        await m.query('DELETE FROM members WHERE id = ?', [memberId]);
      } else await m.query('UPDATE members SET role = ?, updated_at = ? WHERE id = ?', [role, new Date(), memberId]);
      await insertAuditEntriesMysql(m, [decision.audit]);
      return { outcome: 'changed', member: { ...before, role: role ?? before.role } };
    });
  }
}
