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
import { insertAuditEntriesSqlite } from '@shortlink/audit-store';
import { SqliteDb } from '@shortlink/sql';
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

const ms = (d: Date) => d.getTime();

/**
 * Members and sessions in the embedded meta database (the migrations are the meta store's). A
 * write transaction (BEGIN IMMEDIATE) is the lock under which the last owner is kept (docs/design.md, "People and sessions").
 */
export class SqlitePeopleStore implements PeopleStore {
  constructor(private readonly db: SqliteDb) {}

  async invite(member: NewMember, audit?: AuditEntry): Promise<boolean> {
    return this.db
      .transaction(() => {
        if (this.db.prepare('SELECT 1 FROM members WHERE tenant_id = ? AND email = ?').get(member.tenantId, member.email)) return false;
        this.db.prepare(INSERT_MEMBER).run(...memberInsertParams(member, ms));
        insertAuditEntriesSqlite(this.db, [audit]);
        return true;
      })
      .immediate();
  }

  async listMembers(tenantId: string): Promise<Member[]> {
    return (this.db.prepare(`SELECT ${MEMBER_COLUMNS} FROM members WHERE tenant_id = ? ORDER BY created_at, id`).all(tenantId) as MemberRow[]).map(
      memberFromRow,
    );
  }

  async findMember(tenantId: string, memberId: string): Promise<Member | null> {
    const row = this.db.prepare(`SELECT ${MEMBER_COLUMNS} FROM members WHERE tenant_id = ? AND id = ?`).get(tenantId, memberId) as MemberRow | undefined;
    return row ? memberFromRow(row) : null;
  }

  async changeRole(tenantId: string, memberId: string, role: Role, decide: MemberChangeDecision): Promise<MemberChangeOutcome> {
    return this.change(tenantId, memberId, role, decide);
  }

  async removeMember(tenantId: string, memberId: string, decide: MemberChangeDecision): Promise<MemberChangeOutcome> {
    return this.change(tenantId, memberId, null, decide);
  }

  async findInvitation(invitationHash: string, now: Date): Promise<Member | null> {
    const row = this.db
      .prepare(`SELECT ${MEMBER_COLUMNS} FROM members WHERE invitation_hash = ? AND status = 'invited' AND invitation_expires_at > ?`)
      .get(invitationHash, now.getTime()) as MemberRow | undefined;
    return row ? memberFromRow(row) : null;
  }

  async acceptInvitation(invitationHash: string, passwordHash: string, now: Date, audit: (member: Member) => AuditEntry): Promise<Member | null> {
    return this.db
      .transaction(() => {
        const row = this.db
          .prepare(`SELECT ${MEMBER_COLUMNS} FROM members WHERE invitation_hash = ? AND status = 'invited' AND invitation_expires_at > ?`)
          .get(invitationHash, now.getTime()) as MemberRow | undefined;
        if (!row) return null;
        this.db
          .prepare("UPDATE members SET status = 'active', password_hash = ?, invitation_hash = NULL, invitation_expires_at = NULL, updated_at = ? WHERE id = ?")
          .run(passwordHash, now.getTime(), row.id);
        const member: Member = { ...memberFromRow(row), status: 'active', invitationExpiresAt: null };
        insertAuditEntriesSqlite(this.db, [audit(member)]);
        return member;
      })
      .immediate();
  }

  async signInCandidates(email: string): Promise<SignInCandidate[]> {
    return (this.db.prepare(SIGN_IN_SELECT).all(email) as SignInRow[]).map(candidateFromRow);
  }

  async passwordHashOf(memberId: string): Promise<string | null> {
    const row = this.db.prepare('SELECT password_hash FROM members WHERE id = ?').get(memberId) as { password_hash: string | null } | undefined;
    return row?.password_hash ?? null;
  }

  async changePassword(memberId: string, passwordHash: string, keepSessionHash: string | null, audit: AuditEntry): Promise<number> {
    return this.db
      .transaction(() => {
        this.db.prepare('UPDATE members SET password_hash = ?, updated_at = ? WHERE id = ?').run(passwordHash, Date.now(), memberId);
        const ended = this.db.prepare('DELETE FROM member_sessions WHERE member_id = ? AND id_hash <> ?').run(memberId, keepSessionHash ?? '').changes;
        insertAuditEntriesSqlite(this.db, [audit]);
        return ended;
      })
      .immediate();
  }

  async createSession(s: Session): Promise<void> {
    this.db.prepare(INSERT_SESSION).run(s.idHash, s.memberId, s.tenantId, ms(s.createdAt), ms(s.lastSeenAt), ms(s.expiresAt), clientColumn(s.client));
  }

  async findSession(idHash: string): Promise<SessionWithMember | null> {
    const row = this.db.prepare(SESSION_SELECT).get(idHash) as SessionRow | undefined;
    return row ? sessionFromRow(row) : null;
  }

  async touchSession(idHash: string, at: Date): Promise<void> {
    this.db.prepare('UPDATE member_sessions SET last_seen_at = ? WHERE id_hash = ? AND last_seen_at < ?').run(ms(at), idHash, ms(at));
  }

  async listSessions(memberId: string): Promise<Session[]> {
    return (this.db.prepare(SESSIONS_OF).all(memberId) as PlainSessionRow[]).map(plainSessionFromRow);
  }

  async deleteSession(idHash: string, memberId?: string): Promise<boolean> {
    const { sql, extra } = deleteSessionSql(memberId);
    return this.db.prepare(sql).run(idHash, ...extra).changes === 1;
  }

  async purgeSessions(now: Date, idleBefore: Date, limit: number): Promise<number> {
    return this.db
      .prepare('DELETE FROM member_sessions WHERE id_hash IN (SELECT id_hash FROM member_sessions WHERE expires_at <= ? OR last_seen_at < ? LIMIT ?)')
      .run(ms(now), ms(idleBefore), limit).changes;
  }

  async setPendingSecondFactor(memberId: string, sealedSecret: string): Promise<void> {
    this.db
      .prepare(
        'INSERT INTO member_second_factors (member_id, pending, updated_at) VALUES (?, ?, ?) ON CONFLICT (member_id) DO UPDATE SET pending = excluded.pending, updated_at = excluded.updated_at',
      )
      .run(memberId, sealedSecret, Date.now());
  }

  async secondFactorOf(memberId: string): Promise<SecondFactorState | null> {
    const row = this.db.prepare(SECOND_FACTOR_SELECT).get(memberId) as SecondFactorRow | undefined;
    return row ? secondFactorFromRow(row) : null;
  }

  async enableSecondFactor(memberId: string, pending: string, step: number, recoveryHashes: readonly string[]): Promise<boolean> {
    return this.db
      .transaction(() => {
        if (this.db.prepare(ENABLE_SECOND_FACTOR).run(step, Date.now(), memberId, pending).changes !== 1) return false;
        this.db.prepare('DELETE FROM member_recovery_codes WHERE member_id = ?').run(memberId);
        const { sql, params } = recoveryInsert(memberId, recoveryHashes);
        if (recoveryHashes.length) this.db.prepare(sql).run(...params);
        return true;
      })
      .immediate();
  }

  async useSecondFactorStep(memberId: string, step: number): Promise<boolean> {
    return this.db.prepare(USE_SECOND_FACTOR_STEP).run(step, memberId, step).changes === 1;
  }

  async useRecoveryCode(memberId: string, codeHash: string): Promise<boolean> {
    return this.db.prepare(USE_RECOVERY_CODE).run(memberId, codeHash).changes === 1;
  }

  async disableSecondFactor(memberId: string): Promise<void> {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM member_second_factors WHERE member_id = ?').run(memberId);
      this.db.prepare('DELETE FROM member_recovery_codes WHERE member_id = ?').run(memberId);
    })();
  }

  private change(tenantId: string, memberId: string, role: Role | null, decide: MemberChangeDecision): MemberChangeOutcome {
    return this.db
      .transaction((): MemberChangeOutcome => {
        const row = this.db.prepare(`SELECT ${MEMBER_COLUMNS} FROM members WHERE tenant_id = ? AND id = ?`).get(tenantId, memberId) as MemberRow | undefined;
        if (!row) return { outcome: 'not_found' };
        const before = memberFromRow(row);
        const decision = decide(before);
        if (decision.refuse) return { outcome: 'refused' };
        const { n } = this.db.prepare(ACTIVE_OWNERS).get(tenantId) as { n: number };
        if (leavesNoOwner(before, role, n)) return { outcome: 'last_owner' };
        if (role === null) {
          for (const table of MEMBER_DEPENDENTS) this.db.prepare(`DELETE FROM ${table} WHERE member_id = ?`).run(memberId);
          this.db.prepare('DELETE FROM members WHERE id = ?').run(memberId);
        } else this.db.prepare('UPDATE members SET role = ?, updated_at = ? WHERE id = ?').run(role, Date.now(), memberId);
        insertAuditEntriesSqlite(this.db, [decision.audit]);
        return { outcome: 'changed', member: { ...before, role: role ?? before.role } };
      })
      .immediate();
  }
}
