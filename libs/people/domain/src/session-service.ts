import { createHash, timingSafeEqual } from 'crypto';
import type { LRUCache } from 'lru-cache';
import { type AuditLog, auditEntry } from '@shortlink/audit-domain';
import { boundedLru, Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import type { PasswordHasher } from '@shortlink/links-domain';
import type { Principal, Tenant } from '@shortlink/tenants-domain';
import { hashToken, Member, newToken } from './member';
import { checkNewPassword, MAX_PASSWORD_LENGTH } from './password-policy';
import { PeopleStore, Session, SessionClient, SignInCandidate } from './ports';
import { ROLE_SCOPES } from './roles';
import { SecondFactorService } from './second-factor';
import { SignInThrottle } from './sign-in-throttle';

export interface SessionServiceOptions {
  /** A session unused this long ends. */
  readonly idleMs: number;
  /** A session ends this long after sign-in, whatever its use. */
  readonly absoluteMs: number;
  /**
   * How long a checked session is trusted without asking the store again: the bound on how late a
   * removal, a role change or a sign-out takes effect on every instance (1 s, as for keys).
   */
  readonly cacheMs?: number;
  /** The optional second factor: a member who turned it on signs in with a code (or a recovery code) too. */
  readonly secondFactor?: SecondFactorService;
  readonly clock?: Clock;
}

/** What sessions work with: the people's store, the password hasher, the sign-in throttle, the audit log. */
export interface SessionServiceParts {
  readonly store: PeopleStore;
  readonly passwords: PasswordHasher;
  readonly throttle: SignInThrottle;
  readonly audit: AuditLog | null;
}

/** A session as the guard sees it: the principal, and the CSRF token its cookie-authenticated writes must carry. */
export interface VerifiedSession {
  readonly principal: Principal;
  readonly csrfToken: string;
  readonly member: Member;
  readonly tenant: Tenant;
}

export interface SignedIn extends VerifiedSession {
  /** The session id, for the cookie only: stored as its hash. */
  readonly token: string;
  readonly expiresAt: Date;
}

/**
 * Sign-in with a password and the sessions it opens (docs/design.md, "People and sessions").
 * Sessions live in the meta database by the hash of their id, so a removed member or a changed role
 * is seen by every instance within `cacheMs`. Failed sign-ins are counted per account and per
 * address by the SignInThrottle (the shared windows: Redis on the real stack); past either limit a
 * sign-in is 429 before any password is checked, for at most the window.
 */
export class SessionService {
  private readonly cache: LRUCache<string, { found: VerifiedSession & { lastSeenAt: number; expiresAt: number } } | { error: DomainError }>;
  private readonly cacheMs: number;
  private decoy: Promise<string> | null = null;
  private readonly clock: Clock;

  private readonly store: PeopleStore;
  private readonly passwords: PasswordHasher;
  private readonly throttle: SignInThrottle;
  private readonly audit: AuditLog | null;

  constructor(
    parts: SessionServiceParts,
    private readonly options: SessionServiceOptions,
  ) {
    ({ store: this.store, passwords: this.passwords, throttle: this.throttle, audit: this.audit } = parts);
    this.clock = options.clock ?? systemClock;
    this.cacheMs = options.cacheMs ?? 1000;
    this.cache = boundedLru({ maxEntries: 10_000, ttlMs: Math.max(1, this.cacheMs) });
  }

  async signIn(
    input: { email: unknown; password: unknown; tenantId?: unknown; code?: unknown; recoveryCode?: unknown },
    clientAddress: string | null,
    client: SessionClient | null = null,
  ): Promise<SignedIn> {
    const email = typeof input.email === 'string' ? input.email.trim().toLowerCase() : '';
    const password = typeof input.password === 'string' ? input.password : '';
    const subject = { email, address: clientAddress };
    await this.throttle.admit(subject, 'too many failed sign-ins for this account or from this address; retry later');
    let candidates = email && password.length <= MAX_PASSWORD_LENGTH ? await this.store.signInCandidates(email) : [];
    if (typeof input.tenantId === 'string') candidates = candidates.filter((c) => c.tenant.id === input.tenantId);
    const matches: SignInCandidate[] = [];
    for (const candidate of candidates) if (await this.passwords.verify(candidate.passwordHash, password)) matches.push(candidate);
    // An unknown email costs one argon2 check too: the answer's time does not tell which emails exist.
    if (!candidates.length) await this.passwords.verify(await this.decoyHash(), password);
    const fail = async (failed: readonly SignInCandidate[], reason: string, message: string) => {
      await this.throttle.fail(subject);
      for (const c of failed)
        await this.audit?.recordSignIn({ tenantId: c.tenant.id, person: c.member, clientAddress, succeeded: false, method: 'password', reason });
      return new DomainError(ErrorCode.UNAUTHENTICATED, message);
    };
    if (!matches.length) throw await fail(candidates, 'wrong_password', 'wrong email or password');
    if (matches.length > 1)
      throw new DomainError(ErrorCode.VALIDATION_FAILED, 'this email belongs to several tenants: give tenantId', {
        field: 'tenantId',
        tenants: matches.map((m) => ({ id: m.tenant.id, name: m.tenant.name })),
      });
    const { member, tenant } = matches[0];
    if (tenant.status === 'suspended') throw new DomainError(ErrorCode.TENANT_SUSPENDED, 'this tenant is suspended; contact the operator');
    const second = this.options.secondFactor
      ? await this.options.secondFactor.check(member.id, { code: input.code, recoveryCode: input.recoveryCode })
      : 'not_enrolled';
    // The password was right: asking for the code counts nothing; a wrong or replayed code counts as a failed sign-in.
    if (second === 'missing')
      throw new DomainError(
        ErrorCode.SECOND_FACTOR_REQUIRED,
        'this account has a second factor: send the code of the authenticator app (or a recovery code) with the password',
      );
    if (second === 'wrong') throw await fail(matches, 'wrong_second_factor', 'wrong or already used code');
    return this.openSession(member, tenant, clientAddress, 'password', client);
  }

  /**
   * Opens a session for a member whose identity is proven (a password and second factor here, an
   * accepted invitation, or a tenant's OpenID provider: SsoService), with `auth.signed_in` in the
   * tenant's log; `client` is kept with it for the person's list of sessions.
   */
  async openSession(
    member: Member,
    tenant: Tenant,
    clientAddress: string | null,
    method: 'password' | 'oidc',
    client: SessionClient | null = null,
  ): Promise<SignedIn> {
    if (tenant.status === 'suspended') throw new DomainError(ErrorCode.TENANT_SUSPENDED, 'this tenant is suspended; contact the operator');
    const token = newToken('ses');
    const now = this.clock.now();
    const expiresAt = new Date(now + this.options.absoluteMs);
    await this.store.createSession({
      idHash: hashToken(token),
      memberId: member.id,
      tenantId: tenant.id,
      createdAt: new Date(now),
      lastSeenAt: new Date(now),
      expiresAt,
      client,
    });
    await this.audit?.recordSignIn({ tenantId: tenant.id, person: member, clientAddress, succeeded: true, method });
    return { token, expiresAt, csrfToken: csrfTokenOf(token), member, tenant, principal: principalOf(member, tenant) };
  }

  /** The session of a cookie: 401 for an unknown, ended or idle one, 403 for a suspended tenant. */
  async verify(token: unknown): Promise<VerifiedSession> {
    if (typeof token !== 'string' || !token.startsWith('ses_') || token.length > 100)
      throw new DomainError(ErrorCode.UNAUTHENTICATED, 'sign in again: this session is unknown or ended');
    const idHash = hashToken(token);
    const now = this.clock.now();
    let cached = this.cache.get(idHash);
    if (!cached) {
      let found;
      try {
        found = await this.store.findSession(idHash);
      } catch (error) {
        throw new DomainError(
          ErrorCode.DEPENDENCY_UNAVAILABLE,
          'the tenant database is unavailable; retry shortly',
          { retryAfterSeconds: 1 },
          { cause: error },
        );
      }
      if (!found) cached = { error: new DomainError(ErrorCode.UNAUTHENTICATED, 'sign in again: this session is unknown or ended') };
      else if (found.tenant.status === 'suspended')
        cached = { error: new DomainError(ErrorCode.TENANT_SUSPENDED, 'this tenant is suspended; contact the operator') };
      else
        cached = {
          found: {
            principal: principalOf(found.member, found.tenant),
            csrfToken: csrfTokenOf(token),
            member: found.member,
            tenant: found.tenant,
            lastSeenAt: found.session.lastSeenAt.getTime(),
            expiresAt: found.session.expiresAt.getTime(),
          },
        };
      this.cache.set(idHash, cached);
    }
    if ('error' in cached) throw cached.error;
    const { found } = cached;
    if (found.expiresAt <= now || now - found.lastSeenAt > this.options.idleMs)
      throw new DomainError(ErrorCode.UNAUTHENTICATED, 'sign in again: this session has ended');
    if (now - found.lastSeenAt > Math.min(60_000, this.options.idleMs / 10)) {
      // Activity, written at most once a minute per session (the idle lifetime is minutes to hours).
      found.lastSeenAt = now;
      await this.store.touchSession(idHash, new Date(now)).catch(() => undefined);
    }
    return found;
  }

  /** Ends the session now on this instance, on the others within `cacheMs`; `auth.signed_out` in the tenant's log. */
  async signOut(token: string, clientAddress: string | null): Promise<void> {
    const idHash = hashToken(token);
    const cached = this.cache.get(idHash);
    // Whose session it was: from the check that let the request in, or (that check's cache entry gone) from the store.
    const member =
      cached && 'found' in cached ? cached.found.member : this.audit ? (await this.store.findSession(idHash).catch(() => null))?.member : undefined;
    await this.store.deleteSession(idHash);
    this.cache.delete(idHash);
    if (this.audit && member) {
      await this.audit.record(
        this.audit.entry(
          { actor: { type: 'person', id: member.id, name: member.email }, clientAddress },
          { log: member.tenantId, action: 'auth.signed_out', target: { type: 'member', id: member.id, domain: null } },
        ),
      );
    }
  }

  /**
   * A person's new password (docs/design.md, "People and sessions"): the current one is checked (a
   * wrong one is counted like a failed sign-in, 403 PASSWORD_INCORRECT), the new one against the
   * policy; every other session of the person ends (on the other instances within `cacheMs`), the
   * one making the change stays. `member.password_changed` in its transaction.
   */
  async changePassword(
    session: { readonly token: string; readonly member: Member },
    input: { currentPassword: unknown; newPassword: unknown },
    passwordMinLength: number,
    clientAddress: string | null,
  ): Promise<{ sessionsEnded: number }> {
    const { member } = session;
    await this.throttle.admit({ email: member.email }, 'too many wrong passwords for this account; retry later');
    const stored = await this.store.passwordHashOf(member.id);
    const current = typeof input.currentPassword === 'string' ? input.currentPassword : '';
    if (!stored || current.length > MAX_PASSWORD_LENGTH || !(await this.passwords.verify(stored, current))) {
      await this.throttle.fail({ email: member.email });
      throw new DomainError(ErrorCode.PASSWORD_INCORRECT, 'the current password is wrong', { field: 'currentPassword' });
    }
    const hash = await this.passwords.hash(checkNewPassword(input.newPassword, passwordMinLength, member.email));
    const keep = hashToken(session.token);
    const entry = auditEntry(
      { actor: { type: 'person', id: member.id, name: member.email }, clientAddress },
      { log: member.tenantId, action: 'member.password_changed', target: { type: 'member', id: member.id, domain: null }, details: { passwordChanged: true } },
      new Date(this.clock.now()),
    );
    const sessionsEnded = await this.store.changePassword(member.id, hash, keep, entry);
    return { sessionsEnded };
  }

  /** A person's sessions that have not ended, newest first, the one asking marked `current`; the id is the stored hash (never the cookie's value). */
  async listSessions(session: { readonly token: string; readonly member: Member }): Promise<Array<Session & { current: boolean }>> {
    const now = this.clock.now();
    const own = hashToken(session.token);
    return (await this.store.listSessions(session.member.id))
      .filter((s) => s.expiresAt.getTime() > now && now - s.lastSeenAt.getTime() <= this.options.idleMs)
      .map((s) => ({ ...s, current: s.idHash === own }));
  }

  /** Ends one of the person's sessions (another device): at once here, within `cacheMs` elsewhere; `member.sessions_revoked`. */
  async revokeSession(session: { readonly member: Member }, idHash: string, clientAddress: string | null): Promise<void> {
    const { member } = session;
    if (!/^[0-9a-f]{64}$/.test(idHash) || !(await this.store.deleteSession(idHash, member.id)))
      throw new DomainError(ErrorCode.SESSION_NOT_FOUND, 'no such session of yours', { id: idHash });
    this.cache.delete(idHash);
    await this.audit?.record(
      this.audit.entry(
        { actor: { type: 'person', id: member.id, name: member.email }, clientAddress },
        { log: member.tenantId, action: 'member.sessions_revoked', target: { type: 'session', id: idHash.slice(0, 16), domain: null }, details: { count: 1 } },
      ),
    );
  }

  /** Sessions past their end, deleted in a batch (the expiry job). */
  purgeEnded(limit = 1000): Promise<number> {
    const now = this.clock.now();
    return this.store.purgeSessions(new Date(now), new Date(now - this.options.idleMs), limit);
  }

  private decoyHash(): Promise<string> {
    this.decoy ??= this.passwords.hash('decoy password, never a member’s');
    return this.decoy;
  }
}

/** A person's principal: the role's scopes, in the tenant's plan; the member's id stands where a key's would. */
export function principalOf(member: Member, tenant: Tenant): Principal {
  return {
    tenantId: tenant.id,
    keyId: member.id,
    scopes: ROLE_SCOPES[member.role],
    plan: tenant.plan,
    actor: { kind: 'person', id: member.id, name: member.email, email: member.email, tenantId: tenant.id, role: member.role },
  };
}

/**
 * The CSRF token of a session (docs/design.md, "People and sessions"): derived from the session id,
 * which only the cookie holds, so a page of another origin cannot know it; nothing more to store.
 */
export function csrfTokenOf(sessionToken: string): string {
  return createHash('sha256').update(`csrf:${sessionToken}`, 'utf8').digest('base64url');
}

/** Whether a request's x-csrf-token is its session's, compared in constant time. */
export function csrfMatches(expected: string, given: unknown): boolean {
  if (typeof given !== 'string' || given.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}
