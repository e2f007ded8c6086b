import { randomUUID } from 'crypto';
import { AuditContext, auditEntry } from '@shortlink/audit-domain';
import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import type { PasswordHasher } from '@shortlink/links-domain';
import { checkEmail, hashToken, Member, newToken } from './member';
import { checkNewPassword } from './password-policy';
import { Mailer, MemberChangeOutcome, PeopleStore } from './ports';
import { isRole, MemberManager, mayManageRole, Role, ROLES } from './roles';

export interface MemberServiceOptions {
  /** How long an invitation works. */
  readonly invitationTtlMs: number;
  /** Where a person accepts: the token is appended as `#token=…` (a fragment: never sent to a server's logs). */
  readonly acceptUrl: string;
  readonly passwordMinLength: number;
  /** Called when the invitation mail could not be sent (the invitation stands: its token is in the answer). */
  readonly onMailFailure?: (error: unknown) => void;
  readonly clock?: Clock;
}

/** What members are kept with: the people's store, the password hasher, and the mailer (null without SMTP_URL). */
export interface MemberServiceParts {
  readonly store: PeopleStore;
  readonly passwords: PasswordHasher;
  readonly mailer: Mailer | null;
}

export interface Invitation {
  readonly token: string;
  readonly url: string;
  readonly expiresAt: Date;
  /** Whether it was handed to the mail server (false without SMTP_URL, or when sending failed). */
  readonly mailed: boolean;
}

/**
 * A tenant's members (docs/design.md, "People and sessions"): invited by email with a role, the
 * invitation token shown once and stored as its hash, accepted with a password; roles changed and
 * members removed by owners, admins (never touching owners) and keys with `members:write` (only an
 * owner's, acting as that owner, or the first key of a tenant without an owner: "Security model").
 * A tenant keeps one active owner. Every change goes to the tenant's audit log in its transaction.
 */
export class MemberService {
  private readonly clock: Clock;

  private readonly store: PeopleStore;
  private readonly passwords: PasswordHasher;
  private readonly mailer: Mailer | null;

  constructor(
    parts: MemberServiceParts,
    private readonly options: MemberServiceOptions,
  ) {
    ({ store: this.store, passwords: this.passwords, mailer: this.mailer } = parts);
    this.clock = options.clock ?? systemClock;
  }

  async invite(
    tenantId: string,
    manager: MemberManager,
    input: { email: unknown; role: unknown },
    audit?: AuditContext,
    tenantName?: string,
  ): Promise<{ member: Member; invitation: Invitation }> {
    const email = checkEmail(input.email);
    const role = checkRole(input.role);
    if (!mayManageRole(manager, role)) throw refused(role);
    const now = new Date(this.clock.now());
    const token = newToken('inv');
    const expiresAt = new Date(now.getTime() + this.options.invitationTtlMs);
    const member: Member = { id: randomUUID(), tenantId, email, role, status: 'invited', createdAt: now, invitationExpiresAt: expiresAt };
    const entry = audit && auditEntry(audit, { log: tenantId, action: 'member.invited', target: memberTarget(member.id), details: { email, role } }, now);
    const added = await this.store.invite({ ...member, invitationHash: hashToken(token), invitationExpiresAt: expiresAt }, entry);
    if (!added) throw new DomainError(ErrorCode.MEMBER_EXISTS, `${email} is a member of this tenant already`, { email });
    const url = `${this.options.acceptUrl}#token=${token}`;
    const mailed = await this.mail(email, role, url, expiresAt, tenantName);
    return { member, invitation: { token, url, expiresAt, mailed } };
  }

  listMembers(tenantId: string): Promise<Member[]> {
    return this.store.listMembers(tenantId);
  }

  async getMember(tenantId: string, memberId: string): Promise<Member> {
    const member = await this.store.findMember(tenantId, memberId);
    if (!member) throw notFound(memberId);
    return member;
  }

  async changeRole(tenantId: string, manager: MemberManager, memberId: string, rawRole: unknown, audit?: AuditContext): Promise<Member> {
    const role = checkRole(rawRole);
    if (!mayManageRole(manager, role)) throw refused(role);
    const outcome = await this.store.changeRole(tenantId, memberId, role, (before) => {
      if (!mayManageRole(manager, before.role)) return { refuse: true };
      if (before.role === role) return { audit: null };
      const at = new Date(this.clock.now());
      return {
        audit:
          audit &&
          auditEntry(
            audit,
            {
              log: tenantId,
              action: 'member.role_changed',
              target: memberTarget(memberId),
              changes: { role: { from: before.role, to: role } },
              details: { email: before.email },
            },
            at,
          ),
      };
    });
    return this.outcome(outcome, memberId);
  }

  async removeMember(tenantId: string, manager: MemberManager, memberId: string, audit?: AuditContext): Promise<void> {
    const outcome = await this.store.removeMember(tenantId, memberId, (before) => {
      if (!mayManageRole(manager, before.role)) return { refuse: true };
      const at = new Date(this.clock.now());
      return {
        audit:
          audit &&
          auditEntry(
            audit,
            { log: tenantId, action: 'member.removed', target: memberTarget(memberId), details: { email: before.email, role: before.role } },
            at,
          ),
      };
    });
    this.outcome(outcome, memberId);
  }

  /**
   * The invited member a token names (unused, unexpired), for the page that accepts it: who is
   * invited, to which tenant, with which role and until when. 400 INVITATION_INVALID otherwise.
   */
  async invitation(token: unknown): Promise<Member> {
    if (typeof token !== 'string' || !token.startsWith('inv_') || token.length > 100) throw invalidInvitation();
    const invited = await this.store.findInvitation(hashToken(token), new Date(this.clock.now()));
    if (!invited) throw invalidInvitation();
    return invited;
  }

  /** Accepts an invitation with a password (checked against the policy first): the member is active and may sign in. */
  async accept(input: { token: unknown; password: unknown }, clientAddress: string | null): Promise<Member> {
    const invalid = invalidInvitation;
    if (typeof input.token !== 'string' || !input.token.startsWith('inv_') || input.token.length > 100) throw invalid();
    const invitationHash = hashToken(input.token);
    const now = new Date(this.clock.now());
    // The policy needs the email: read the invited member first (the store checks the token again as it accepts).
    const invited = await this.store.findInvitation(invitationHash, now);
    if (!invited) throw invalid();
    const password = checkNewPassword(input.password, this.options.passwordMinLength, invited.email);
    const passwordHash = await this.passwords.hash(password);
    const member = await this.store.acceptInvitation(invitationHash, passwordHash, now, (m) =>
      auditEntry(
        { actor: { type: 'person', id: m.id, name: m.email }, clientAddress },
        { log: m.tenantId, action: 'member.joined', target: memberTarget(m.id), details: { email: m.email, role: m.role } },
        now,
      ),
    );
    if (!member) throw invalid();
    return member;
  }

  private outcome(outcome: MemberChangeOutcome, memberId: string): Member {
    if (outcome.outcome === 'changed') return outcome.member;
    if (outcome.outcome === 'not_found') throw notFound(memberId);
    if (outcome.outcome === 'refused') throw new DomainError(ErrorCode.INSUFFICIENT_SCOPE, 'only an owner may change or remove an owner', { memberId });
    throw new DomainError(ErrorCode.LAST_OWNER, 'a tenant keeps at least one active owner: make another member owner first', { memberId });
  }

  private async mail(email: string, role: Role, url: string, expiresAt: Date, tenantName?: string): Promise<boolean> {
    if (!this.mailer) return false;
    try {
      await this.mailer.send({
        to: email,
        subject: `You are invited to ${tenantName ?? 'a shortlink tenant'}`,
        text: [
          `You have been invited to ${tenantName ?? 'a shortlink tenant'} as ${role}.`,
          '',
          `Choose a password here: ${url}`,
          '',
          `This invitation works until ${expiresAt.toISOString()}. If you did not expect it, ignore this message.`,
        ].join('\n'),
      });
      return true;
    } catch (error) {
      this.options.onMailFailure?.(error);
      return false;
    }
  }
}

const invalidInvitation = () => new DomainError(ErrorCode.INVITATION_INVALID, 'this invitation is unknown, used or expired; ask for a new one');
const memberTarget = (id: string) => ({ type: 'member' as const, id, domain: null });
const notFound = (memberId: string) => new DomainError(ErrorCode.MEMBER_NOT_FOUND, `no member ${memberId}`, { memberId });
const refused = (role: Role) => new DomainError(ErrorCode.INSUFFICIENT_SCOPE, `only an owner may give or take the ${role} role`, { role });

function checkRole(value: unknown): Role {
  if (!isRole(value)) throw new DomainError(ErrorCode.VALIDATION_FAILED, `role must be one of ${ROLES.join(', ')}`, { field: 'role' });
  return value;
}
