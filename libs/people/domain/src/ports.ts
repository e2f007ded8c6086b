import type { AuditEntry } from '@shortlink/audit-domain';
import type { Tenant } from '@shortlink/tenants-domain';
import { Member } from './member';
import { Role } from './roles';

/** A member as the invitation creates it: with the hash of its invitation token. */
export interface NewMember {
  readonly id: string;
  readonly tenantId: string;
  readonly email: string;
  readonly role: Role;
  readonly createdAt: Date;
  readonly invitationHash: string;
  readonly invitationExpiresAt: Date;
}

/** A member who may sign in, with the password hash to check and the tenant. */
export interface SignInCandidate {
  readonly member: Member;
  readonly passwordHash: string;
  readonly tenant: Tenant;
}

/**
 * What a session's sign-in came from, as the person sees it among their sessions (docs/design.md,
 * "People and sessions"): the kind of device, browser and OS its user agent names, and the
 * approximate place of its address in the offline geo database. Never the address or the user
 * agent themselves. Each part null when unknown.
 */
export interface SessionClient {
  /** mobile | tablet | desktop | bot | other */
  readonly device: string | null;
  readonly browser: string | null;
  readonly os: string | null;
  /** ISO 3166-1 alpha-2. */
  readonly country: string | null;
  readonly region: string | null;
  readonly city: string | null;
}

const CLIENT_PARTS = ['device', 'browser', 'os', 'country', 'region', 'city'] as const;
/** Longest part kept: a browser's or a city's name is far shorter; longer text is cut, never refused (a sign-in does not fail on its user agent). */
export const MAX_SESSION_CLIENT_PART = 100;

/** A client as a store keeps it: the known parts only, each a string cut to MAX_SESSION_CLIENT_PART, or null. */
export function boundedSessionClient(client: Partial<Record<keyof SessionClient, unknown>> | null | undefined): SessionClient | null {
  if (!client) return null;
  return Object.fromEntries(
    CLIENT_PARTS.map((k) => [k, typeof client[k] === 'string' && client[k] !== '' ? (client[k] as string).slice(0, MAX_SESSION_CLIENT_PART) : null]),
  ) as unknown as SessionClient;
}

/** A session as stored: by the SHA-256 of its id (the cookie's value), never the id itself. */
export interface Session {
  readonly idHash: string;
  readonly memberId: string;
  readonly tenantId: string;
  readonly createdAt: Date;
  readonly lastSeenAt: Date;
  /** The absolute end, whatever the activity. */
  readonly expiresAt: Date;
  /** Where it was opened; null for a session opened before this was kept, or without a request (a test). */
  readonly client?: SessionClient | null;
}

export interface SessionWithMember {
  readonly session: Session;
  readonly member: Member;
  readonly tenant: Tenant;
}

export type MemberChangeOutcome = { readonly outcome: 'changed'; readonly member: Member } | { readonly outcome: 'not_found' | 'last_owner' | 'refused' };

/**
 * A change to a member: asked, under a lock of the tenant's members, with the member before it,
 * for the new role (or null to remove) and the audit entry; `refuse` says the caller may not.
 */
export type MemberChangeDecision = (before: Member) => { readonly refuse: true } | { readonly refuse?: false; readonly audit?: AuditEntry | null };

/**
 * Members and their sessions in the meta database (docs/design.md, "People and sessions"). A change
 * given an audit entry writes it in the change's transaction, as the tenant store does. A tenant
 * keeps at least one active owner once it has one: the store decides it under a lock, so two
 * concurrent demotions never both pass.
 */
export interface PeopleStore {
  /** Adds an invited member; false when the tenant has a member with that email already. */
  invite(member: NewMember, audit?: AuditEntry): Promise<boolean>;
  listMembers(tenantId: string): Promise<Member[]>;
  findMember(tenantId: string, memberId: string): Promise<Member | null>;
  /** Sets a member's role; `last_owner` when it would leave the tenant without an active owner. */
  changeRole(tenantId: string, memberId: string, role: Role, decide: MemberChangeDecision): Promise<MemberChangeOutcome>;
  /** Removes a member and every session of it; `last_owner` as for changeRole. */
  removeMember(tenantId: string, memberId: string, decide: MemberChangeDecision): Promise<MemberChangeOutcome>;
  /** The invited member whose unspent, unexpired (at `now`) invitation hashes to this; null otherwise. */
  findInvitation(invitationHash: string, now: Date): Promise<Member | null>;
  /**
   * Accepts an invitation: the invited member whose token hashes to `invitationHash`, unexpired at
   * `now`, becomes active with this password hash (the invitation is spent). Null otherwise.
   */
  acceptInvitation(invitationHash: string, passwordHash: string, now: Date, audit: (member: Member) => AuditEntry): Promise<Member | null>;
  /** Active members with this email, in any tenant, with their password hashes. */
  signInCandidates(email: string): Promise<SignInCandidate[]>;
  /** The member's password hash (null for an invited member). */
  passwordHashOf(memberId: string): Promise<string | null>;
  /**
   * Sets a new password hash and ends every session of the member but `keepSessionHash`, with the
   * audit entry, in one transaction; how many sessions it ended.
   */
  changePassword(memberId: string, passwordHash: string, keepSessionHash: string | null, audit: AuditEntry): Promise<number>;
  createSession(session: Session): Promise<void>;
  /** The member's sessions, newest first. */
  listSessions(memberId: string): Promise<Session[]>;
  findSession(idHash: string): Promise<SessionWithMember | null>;
  /** Records activity (the idle lifetime counts from it). */
  touchSession(idHash: string, at: Date): Promise<void>;
  /** Deletes a session; with `memberId`, only that member's (false when it has no such session). */
  deleteSession(idHash: string, memberId?: string): Promise<boolean>;
  /** Sets the member's pending TOTP secret (sealed), replacing a pending one; an enabled factor stays as it is until confirmed. */
  setPendingSecondFactor(memberId: string, sealedSecret: string): Promise<void>;
  secondFactorOf(memberId: string): Promise<SecondFactorState | null>;
  /**
   * Turns the factor on with the pending secret, if it is still `pending`: the secret, the time step
   * its confirming code used, and the hashes of new recovery codes (replacing any). False when the
   * pending secret changed meanwhile.
   */
  enableSecondFactor(memberId: string, pending: string, step: number, recoveryHashes: readonly string[]): Promise<boolean>;
  /** Records a code's time step as used, only if later than the last used: false for a replay. */
  useSecondFactorStep(memberId: string, step: number): Promise<boolean>;
  /** Spends a recovery code: false when the member has no such unused code. */
  useRecoveryCode(memberId: string, codeHash: string): Promise<boolean>;
  disableSecondFactor(memberId: string): Promise<void>;
  /** Deletes sessions past their absolute end or idle since before `idleBefore`; how many. */
  purgeSessions(now: Date, idleBefore: Date, limit: number): Promise<number>;
}

export const PEOPLE_STORE = Symbol('PEOPLE_STORE');

/** A member's second factor as stored: sealed secrets (SecretBox), the last time step used. */
export interface SecondFactorState {
  /** The enabled secret; null while only an enrolment is pending. */
  readonly secret: string | null;
  readonly pending: string | null;
  readonly lastStep: number | null;
}

/** One message out (the invitation); the adapter is SMTP (nodemailer) when SMTP_URL is set. */
export interface OutgoingMail {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
}

export interface Mailer {
  send(mail: OutgoingMail): Promise<void>;
}

/** Bound to null when no SMTP_URL is configured: invitations are then only in the API's answer. */
export const MAILER = Symbol('MAILER');
