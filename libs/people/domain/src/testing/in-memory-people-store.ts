import type { AuditEntry } from '@shortlink/audit-domain';
import type { KeyPerson, Tenant } from '@shortlink/tenants-domain';
import { Member } from '../member';
import {
  boundedSessionClient,
  MemberChangeDecision,
  MemberChangeOutcome,
  NewMember,
  PeopleStore,
  SecondFactorState,
  Session,
  SessionWithMember,
  SignInCandidate,
} from '../ports';
import { Role } from '../roles';

type Row = { -readonly [K in keyof Member]: Member[K] } & { invitationHash: string | null; passwordHash: string | null };

/**
 * A PeopleStore in maps, for the domain's unit tests; the adapters' contract suite holds it too
 * (link-store). It answers the in-memory tenant store's keys for their persons, as the members
 * table does the SQL stores' joins (`tenants.people = people`).
 */
export class InMemoryPeopleStore implements PeopleStore {
  readonly rows: Row[] = [];
  readonly sessions = new Map<string, Session>();
  readonly entries: AuditEntry[] = [];
  readonly secondFactors = new Map<string, SecondFactorState>();
  readonly recoveryCodes = new Map<string, Set<string>>();

  constructor(private readonly tenants: (tenantId: string) => Tenant | null) {}

  async invite(member: NewMember, audit?: AuditEntry): Promise<boolean> {
    if (this.rows.some((r) => r.tenantId === member.tenantId && r.email === member.email)) return false;
    const { id, tenantId, email, role, createdAt, invitationHash, invitationExpiresAt } = member;
    this.rows.push({ id, tenantId, email, role, createdAt, status: 'invited', invitationExpiresAt, invitationHash, passwordHash: null });
    if (audit) this.entries.push(audit);
    return true;
  }

  /** The active member a key acts for (tenants-domain's KeyPeopleDirectory). */
  person(tenantId: string, memberId: string): KeyPerson | null {
    const row = this.rows.find((r) => r.tenantId === tenantId && r.id === memberId && r.status === 'active');
    return row ? { id: row.id, email: row.email, role: row.role } : null;
  }

  hasActiveOwner(tenantId: string): boolean {
    return this.rows.some((r) => r.tenantId === tenantId && r.role === 'owner' && r.status === 'active');
  }

  async listMembers(tenantId: string): Promise<Member[]> {
    return this.rows.filter((r) => r.tenantId === tenantId).map(plain);
  }

  async findMember(tenantId: string, memberId: string): Promise<Member | null> {
    const row = this.rows.find((r) => r.tenantId === tenantId && r.id === memberId);
    return row ? plain(row) : null;
  }

  async changeRole(tenantId: string, memberId: string, role: Role, decide: MemberChangeDecision): Promise<MemberChangeOutcome> {
    return this.change(tenantId, memberId, role, decide);
  }

  async removeMember(tenantId: string, memberId: string, decide: MemberChangeDecision): Promise<MemberChangeOutcome> {
    return this.change(tenantId, memberId, null, decide);
  }

  async findInvitation(invitationHash: string, now: Date): Promise<Member | null> {
    const row = this.invited(invitationHash, now);
    return row ? plain(row) : null;
  }

  async acceptInvitation(invitationHash: string, passwordHash: string, now: Date, audit: (member: Member) => AuditEntry): Promise<Member | null> {
    const row = this.invited(invitationHash, now);
    if (!row) return null;
    Object.assign(row, { status: 'active', passwordHash, invitationHash: null, invitationExpiresAt: null });
    this.entries.push(audit(plain(row)));
    return plain(row);
  }

  async signInCandidates(email: string): Promise<SignInCandidate[]> {
    return this.rows
      .filter((r) => r.email === email && r.status === 'active' && r.passwordHash)
      .map((r) => ({ member: plain(r), passwordHash: r.passwordHash!, tenant: this.tenants(r.tenantId)! }));
  }

  async passwordHashOf(memberId: string): Promise<string | null> {
    return this.rows.find((r) => r.id === memberId)?.passwordHash ?? null;
  }

  async changePassword(memberId: string, passwordHash: string, keepSessionHash: string | null, audit: AuditEntry): Promise<number> {
    const row = this.rows.find((r) => r.id === memberId);
    if (!row) return 0;
    row.passwordHash = passwordHash;
    let ended = 0;
    for (const [hash, s] of this.sessions) if (s.memberId === memberId && hash !== keepSessionHash && this.sessions.delete(hash)) ended++;
    this.entries.push(audit);
    return ended;
  }

  async createSession(session: Session): Promise<void> {
    this.sessions.set(session.idHash, { ...session, client: boundedSessionClient(session.client) });
  }

  async findSession(idHash: string): Promise<SessionWithMember | null> {
    const session = this.sessions.get(idHash);
    const row = session && this.rows.find((r) => r.id === session.memberId);
    return session && row ? { session, member: plain(row), tenant: this.tenants(row.tenantId)! } : null;
  }

  async touchSession(idHash: string, at: Date): Promise<void> {
    const session = this.sessions.get(idHash);
    if (session) this.sessions.set(idHash, { ...session, lastSeenAt: at });
  }

  async listSessions(memberId: string): Promise<Session[]> {
    return [...this.sessions.values()]
      .filter((s) => s.memberId === memberId)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.idHash < b.idHash ? 1 : -1));
  }

  async deleteSession(idHash: string, memberId?: string): Promise<boolean> {
    const session = this.sessions.get(idHash);
    if (!session || (memberId !== undefined && session.memberId !== memberId)) return false;
    return this.sessions.delete(idHash);
  }

  async purgeSessions(now: Date, idleBefore: Date, limit: number): Promise<number> {
    const doomed = [...this.sessions.values()].filter((s) => s.expiresAt <= now || s.lastSeenAt < idleBefore).slice(0, limit);
    for (const s of doomed) this.sessions.delete(s.idHash);
    return doomed.length;
  }

  async setPendingSecondFactor(memberId: string, sealedSecret: string): Promise<void> {
    const state = this.secondFactors.get(memberId);
    this.secondFactors.set(memberId, { secret: state?.secret ?? null, lastStep: state?.lastStep ?? null, pending: sealedSecret });
  }

  async secondFactorOf(memberId: string): Promise<SecondFactorState | null> {
    return this.secondFactors.get(memberId) ?? null;
  }

  async enableSecondFactor(memberId: string, pending: string, step: number, recoveryHashes: readonly string[]): Promise<boolean> {
    if (this.secondFactors.get(memberId)?.pending !== pending) return false;
    this.secondFactors.set(memberId, { secret: pending, pending: null, lastStep: step });
    this.recoveryCodes.set(memberId, new Set(recoveryHashes));
    return true;
  }

  async useSecondFactorStep(memberId: string, step: number): Promise<boolean> {
    const state = this.secondFactors.get(memberId);
    if (!state?.secret || (state.lastStep !== null && state.lastStep >= step)) return false;
    this.secondFactors.set(memberId, { ...state, lastStep: step });
    return true;
  }

  async useRecoveryCode(memberId: string, codeHash: string): Promise<boolean> {
    return this.recoveryCodes.get(memberId)?.delete(codeHash) ?? false;
  }

  async disableSecondFactor(memberId: string): Promise<void> {
    this.secondFactors.delete(memberId);
    this.recoveryCodes.delete(memberId);
  }

  private invited(invitationHash: string, now: Date): Row | undefined {
    return this.rows.find((r) => r.status === 'invited' && r.invitationHash === invitationHash && r.invitationExpiresAt! > now);
  }

  private change(tenantId: string, memberId: string, role: Role | null, decide: MemberChangeDecision): MemberChangeOutcome {
    const row = this.rows.find((r) => r.tenantId === tenantId && r.id === memberId);
    if (!row) return { outcome: 'not_found' };
    const decision = decide(plain(row));
    if (decision.refuse) return { outcome: 'refused' };
    const owners = this.rows.filter((r) => r.tenantId === tenantId && r.role === 'owner' && r.status === 'active');
    if (row.role === 'owner' && row.status === 'active' && role !== 'owner' && owners.length === 1) return { outcome: 'last_owner' };
    if (role === null) {
      this.rows.splice(this.rows.indexOf(row), 1);
      for (const [hash, s] of this.sessions) if (s.memberId === memberId) this.sessions.delete(hash);
      this.secondFactors.delete(memberId);
      this.recoveryCodes.delete(memberId);
    } else row.role = role;
    if (decision.audit) this.entries.push(decision.audit);
    return { outcome: 'changed', member: plain(row) };
  }
}

const plain = (r: Row): Member => ({
  id: r.id,
  tenantId: r.tenantId,
  email: r.email,
  role: r.role,
  status: r.status,
  createdAt: r.createdAt,
  invitationExpiresAt: r.invitationExpiresAt,
});
