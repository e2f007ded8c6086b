import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'crypto';
import { type AuditContext, type AuditEntry, type AuditLog, auditEntry } from '@shortlink/audit-domain';
import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import type { RateWindowStore, Tenant } from '@shortlink/tenants-domain';
import { checkEmail, Member } from './member';
import type { SessionClient } from './ports';
import { isRole, Role } from './roles';
import { SecretBox } from './second-factor';
import type { SessionService, SignedIn } from './session-service';
import type { SsoAddresses } from './sso-addresses';

/** A tenant's OpenID Connect provider as stored (docs/design.md, "Single sign-on"). */
export interface SsoSettings {
  readonly tenantId: string;
  /** The issuer identifier (https://…): its discovery document is `<issuer>/.well-known/openid-configuration`. */
  readonly issuer: string;
  readonly clientId: string;
  /** The client secret sealed (SecretBox, bound to the tenant id): never returned, never in the clear at rest. */
  readonly sealedSecret: string;
  /** Lower-case domains; a person signs in only with an email of one of them. */
  readonly allowedDomains: readonly string[];
  /** The role a person gets when SSO creates it (first sign-in). */
  readonly defaultRole: Role;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A member SSO creates on a first sign-in: active at once, without a password. */
export interface NewSsoMember {
  readonly id: string;
  readonly tenantId: string;
  readonly email: string;
  readonly role: Role;
  readonly createdAt: Date;
}

/**
 * The tenants' SSO settings in the meta database, and the members SSO signs in. A change given an
 * audit entry writes it in the change's transaction.
 */
export interface SsoStore {
  get(tenantId: string): Promise<SsoSettings | null>;
  /** Creates or replaces the tenant's settings. */
  put(settings: SsoSettings, audit: AuditEntry): Promise<void>;
  /** False when the tenant had none. */
  delete(tenantId: string, audit: AuditEntry): Promise<boolean>;
  /**
   * The tenant's member with this email, made active if it was only invited (the provider proved the
   * email); or, when there is none, `member` created active with `audit(member)` in the same
   * transaction. Two concurrent first sign-ins create one member.
   */
  memberForSignIn(member: NewSsoMember, audit: (member: Member) => AuditEntry): Promise<{ readonly member: Member; readonly created: boolean }>;
}

export const SSO_STORE = Symbol('SSO_STORE');

/** What the OpenID client needs of a provider. */
export interface OidcProvider {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
}

/** The identity a provider vouched for in its ID token (or its userinfo). */
export interface OidcIdentity {
  readonly subject: string;
  readonly email: string | null;
  /** False when the provider says the email is not verified; null when it does not say. */
  readonly emailVerified: boolean | null;
}

/** Why a provider call failed: it did not answer (in time, or sensibly), or it refused the code. */
export class OidcError extends Error {
  constructor(
    readonly kind: 'unavailable' | 'rejected',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'OidcError';
  }
}

/**
 * The authorization-code flow against a provider (openid-client in data-access/oidc): discovery,
 * the authorization URL with PKCE, state and nonce, and the code exchange with the ID token's
 * checks (issuer, audience, signature, nonce). Throws OidcError.
 */
export interface OidcClient {
  authorizationUrl(
    provider: OidcProvider,
    request: { readonly redirectUri: string; readonly state: string; readonly nonce: string; readonly codeChallenge: string },
  ): Promise<string>;
  exchange(
    provider: OidcProvider,
    request: { readonly callbackUrl: URL; readonly redirectUri: string; readonly codeVerifier: string; readonly state: string; readonly nonce: string },
  ): Promise<OidcIdentity>;
}

export const OIDC_CLIENT = Symbol('OIDC_CLIENT');

/** What an owner sends to configure SSO; the secret may be left out to keep the stored one. */
export interface SsoInput {
  readonly issuer?: unknown;
  readonly clientId?: unknown;
  readonly clientSecret?: unknown;
  readonly allowedDomains?: unknown;
  readonly defaultRole?: unknown;
}

/** SSO settings as the API answers them: no secret, only whether one is set. */
export interface SsoView {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecretSet: true;
  readonly allowedDomains: readonly string[];
  readonly defaultRole: Role;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface SsoServiceOptions {
  /** The redirect URI registered with the providers (SSO_CALLBACK_URL). */
  readonly callbackUrl: string;
  /** Where SSO may connect (the issuer is checked with it when configured; the OIDC client checks the rest). */
  readonly addresses: Pick<SsoAddresses, 'parse' | 'resolve'>;
  /**
   * How long a call to a provider may take (SSO_TIMEOUT_SECONDS): a start (or a code exchange)
   * that fails to reach the provider is answered this long after the call began, never sooner.
   */
  readonly providerTimeoutMs: number;
  /** Starts allowed per minute per tenant and per client address (SSO_STARTS_PER_MINUTE_*), counted in `windows`; none: no cap. */
  readonly starts?: { readonly windows: RateWindowStore; readonly perTenant: number; readonly perAddress: number } | null;
  /** How long a started sign-in may take to come back (default 10 minutes). */
  readonly pendingTtlMs?: number;
  /** How the service waits (a failure is held until the provider's time is up); setTimeout by default. */
  readonly wait?: (ms: number) => Promise<void>;
  readonly clock?: Clock;
}

/** What single sign-on works with: its settings' store, the OpenID client, the sessions it opens, the tenants, the audit log. */
export interface SsoServiceParts {
  readonly store: SsoStore;
  readonly oidc: OidcClient;
  /** Seals the client secrets (bound to the tenant) and the pending sign-ins. */
  readonly box: SecretBox;
  readonly sessions: Pick<SessionService, 'openSession'>;
  readonly tenants: { getTenant(id: string): Promise<Tenant> };
  readonly audit: AuditLog | null;
}

/** A started sign-in, sealed into a short-lived cookie: nothing to store, any instance finishes it. */
interface Pending {
  readonly tenantId: string;
  readonly state: string;
  readonly nonce: string;
  readonly verifier: string;
  readonly expiresAt: number;
}

const PENDING_AAD = 'sso-pending';
const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;
const random = () => randomBytes(32).toString('base64url');
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const START_WINDOW_MS = 60_000;
const invalid = (field: string, message: string) => new DomainError(ErrorCode.VALIDATION_FAILED, message, { field });

/**
 * Single sign-on with a tenant's OpenID Connect provider (docs/design.md, "Single sign-on"): an
 * owner configures the provider; sign-in runs the authorization-code flow with PKCE (S256), `state`
 * and `nonce`, kept in a sealed cookie of ten minutes; the callback checks the state, exchanges the
 * code (the client checks the ID token and its nonce), checks the email's domain, creates the person
 * on a first sign-in with the configured role, and opens a session as a password sign-in does.
 */
export class SsoService {
  private readonly pendingTtlMs: number;
  private readonly clock: Clock;

  private readonly store: SsoStore;
  private readonly oidc: OidcClient;
  private readonly box: SecretBox;
  private readonly sessions: Pick<SessionService, 'openSession'>;
  private readonly tenants: { getTenant(id: string): Promise<Tenant> };
  private readonly audit: AuditLog | null;

  constructor(
    parts: SsoServiceParts,
    private readonly options: SsoServiceOptions,
  ) {
    ({ store: this.store, oidc: this.oidc, box: this.box, sessions: this.sessions, tenants: this.tenants, audit: this.audit } = parts);
    this.pendingTtlMs = options.pendingTtlMs ?? 600_000;
    this.clock = options.clock ?? systemClock;
  }

  async configure(tenantId: string, input: SsoInput, context: AuditContext): Promise<SsoView> {
    const before = await this.store.get(tenantId);
    const issuer = this.checkIssuer(input.issuer);
    const clientId = typeof input.clientId === 'string' ? input.clientId.trim() : '';
    if (!clientId || clientId.length > 255) throw invalid('clientId', 'clientId must be the client id the provider registered (1 to 255 characters)');
    let sealedSecret: string;
    if (input.clientSecret === undefined || input.clientSecret === null) {
      if (!before) throw invalid('clientSecret', 'clientSecret is required when SSO is first configured');
      sealedSecret = before.sealedSecret;
    } else {
      if (typeof input.clientSecret !== 'string' || !input.clientSecret || input.clientSecret.length > 1024)
        throw invalid('clientSecret', 'clientSecret must be the client secret the provider registered (1 to 1024 characters)');
      sealedSecret = this.box.seal(tenantId, input.clientSecret);
    }
    const allowedDomains = this.checkDomains(input.allowedDomains);
    const defaultRole = input.defaultRole === undefined ? 'viewer' : input.defaultRole;
    if (!isRole(defaultRole) || defaultRole === 'owner')
      throw invalid('defaultRole', 'defaultRole must be admin, editor or viewer (an owner is never made by sign-in)');
    // Last, once the rest is valid: the issuer's host resolves to public addresses only.
    await this.options.addresses.resolve(issuer, 'issuer');
    const now = new Date(this.clock.now());
    const settings: SsoSettings = {
      tenantId,
      issuer,
      clientId,
      sealedSecret,
      allowedDomains,
      defaultRole,
      createdAt: before?.createdAt ?? now,
      updatedAt: now,
    };
    const shown = (s: SsoSettings | null) => s && { issuer: s.issuer, clientId: s.clientId, allowedDomains: [...s.allowedDomains], defaultRole: s.defaultRole };
    const from = shown(before);
    const to = shown(settings)!;
    const changes = Object.fromEntries(
      (Object.keys(to) as Array<keyof typeof to>)
        .filter((k) => JSON.stringify(from?.[k] ?? null) !== JSON.stringify(to[k]))
        .map((k) => [k, { from: from?.[k] ?? null, to: to[k] }]),
    );
    const entry = auditEntry(
      context,
      {
        log: tenantId,
        action: 'sso.settings_changed',
        target: { type: 'tenant', id: tenantId, domain: null },
        changes,
        details: { configured: true, secretChanged: input.clientSecret !== undefined && input.clientSecret !== null },
      },
      now,
    );
    await this.store.put(settings, entry);
    return view(settings);
  }

  async get(tenantId: string): Promise<SsoView> {
    return view(await this.settingsOf(tenantId));
  }

  async remove(tenantId: string, context: AuditContext): Promise<void> {
    const entry = auditEntry(
      context,
      { log: tenantId, action: 'sso.settings_changed', target: { type: 'tenant', id: tenantId, domain: null }, details: { configured: false } },
      new Date(this.clock.now()),
    );
    if (!(await this.store.delete(tenantId, entry))) throw notConfigured();
  }

  /**
   * Starts a sign-in: the provider's authorization URL, and the sealed pending state for the cookie.
   * Anyone may start one, so starts are capped per tenant and per client address (429), and every
   * failure to reach the provider (an address refused, a port closed or silent, a document that is
   * not one) is answered alike: 503 SSO_PROVIDER_UNAVAILABLE, the same words, SSO_TIMEOUT_SECONDS
   * after the call began (docs/design.md, "Single sign-on").
   */
  async start(tenantId: unknown, clientAddress: string | null = null): Promise<{ url: string; pending: string; maxAgeSeconds: number }> {
    if (typeof tenantId !== 'string' || !tenantId || tenantId.length > 64) throw notConfigured();
    await this.admitStart(tenantId, clientAddress);
    const settings = await this.settingsOf(tenantId);
    const tenant = await this.tenants.getTenant(tenantId).catch(() => null);
    if (!tenant) throw notConfigured();
    if (tenant.status === 'suspended') throw new DomainError(ErrorCode.TENANT_SUSPENDED, 'this tenant is suspended; contact the operator');
    const pending: Pending = { tenantId, state: random(), nonce: random(), verifier: random(), expiresAt: this.clock.now() + this.pendingTtlMs };
    const began = this.clock.now();
    let url: string;
    try {
      url = await this.oidc.authorizationUrl(this.providerOf(settings), {
        redirectUri: this.options.callbackUrl,
        state: pending.state,
        nonce: pending.nonce,
        codeChallenge: createHash('sha256').update(pending.verifier).digest('base64url'),
      });
    } catch (error) {
      throw await this.unavailable(began, error);
    }
    return { url, pending: this.box.seal(PENDING_AAD, JSON.stringify(pending)), maxAgeSeconds: Math.floor(this.pendingTtlMs / 1000) };
  }

  /**
   * Finishes a sign-in at the callback: the state must be the one the cookie sealed (400
   * SSO_STATE_MISMATCH otherwise, a missing or expired cookie too), the code must be accepted (401
   * SSO_CODE_REJECTED: wrong, used or expired), the email verified and of an allowed domain (403
   * SSO_EMAIL_DOMAIN_REFUSED); the provider not answering is 503 SSO_PROVIDER_UNAVAILABLE.
   */
  async finish(callbackUrl: URL, pendingCookie: string | undefined, clientAddress: string | null, client: SessionClient | null = null): Promise<SignedIn> {
    const pending = this.openPending(pendingCookie);
    const state = callbackUrl.searchParams.get('state') ?? '';
    if (!pending || !sameText(state, pending.state))
      throw new DomainError(ErrorCode.SSO_STATE_MISMATCH, 'this sign-in was not started here, or took too long: start it again');
    const refused = callbackUrl.searchParams.get('error');
    if (refused)
      throw new DomainError(ErrorCode.SSO_CODE_REJECTED, `the provider refused the sign-in: ${refused.slice(0, 100)}`, {
        providerError: refused.slice(0, 100),
      });
    const settings = await this.settingsOf(pending.tenantId);
    const identity = await this.provider(() =>
      this.oidc.exchange(this.providerOf(settings), {
        callbackUrl,
        redirectUri: this.options.callbackUrl,
        codeVerifier: pending.verifier,
        state: pending.state,
        nonce: pending.nonce,
      }),
    );
    let email: string;
    try {
      email = checkEmail(identity.email);
    } catch {
      throw new DomainError(ErrorCode.SSO_EMAIL_DOMAIN_REFUSED, 'the provider gave no email address; the scope email is needed');
    }
    const domain = email.slice(email.lastIndexOf('@') + 1);
    if (identity.emailVerified === false || !settings.allowedDomains.includes(domain)) {
      await this.audit?.record(
        this.audit.entry(
          { actor: { type: 'person', id: `oidc:${identity.subject}`.slice(0, 64), name: email }, clientAddress },
          {
            log: pending.tenantId,
            action: 'auth.sign_in_failed',
            target: { type: 'member', id: null, domain: null },
            details: { method: 'oidc', reason: identity.emailVerified === false ? 'email_not_verified' : 'email_domain_refused' },
          },
        ),
      );
      throw new DomainError(
        ErrorCode.SSO_EMAIL_DOMAIN_REFUSED,
        identity.emailVerified === false ? 'the provider has not verified this email address' : `emails of ${domain} may not sign in to this tenant`,
        { domain },
      );
    }
    const tenant = await this.tenants.getTenant(pending.tenantId);
    const now = new Date(this.clock.now());
    const { member } = await this.store.memberForSignIn(
      { id: randomUUID(), tenantId: tenant.id, email, role: settings.defaultRole, createdAt: now },
      (created) =>
        auditEntry(
          { actor: { type: 'person', id: created.id, name: created.email }, clientAddress },
          {
            log: tenant.id,
            action: 'member.joined',
            target: { type: 'member', id: created.id, domain: null },
            details: { method: 'oidc', role: created.role, email: created.email },
          },
          now,
        ),
    );
    return this.sessions.openSession(member, tenant, clientAddress, 'oidc', client);
  }

  private async settingsOf(tenantId: string): Promise<SsoSettings> {
    const settings = await this.store.get(tenantId);
    if (!settings) throw notConfigured();
    return settings;
  }

  private providerOf(settings: SsoSettings) {
    return { issuer: settings.issuer, clientId: settings.clientId, clientSecret: this.box.open(settings.tenantId, settings.sealedSecret) };
  }

  private async provider<T>(call: () => Promise<T>): Promise<T> {
    const began = this.clock.now();
    try {
      return await call();
    } catch (error) {
      if (error instanceof OidcError && error.kind === 'rejected')
        throw new DomainError(ErrorCode.SSO_CODE_REJECTED, `the provider did not accept this sign-in: ${error.message}`, {}, { cause: error });
      throw await this.unavailable(began, error);
    }
  }

  /**
   * The one answer to a provider that could not be reached, whatever the reason (the reason is the
   * error's cause, for the log only), given when the provider's time is up: a closed port and a
   * silent one, a refused address and a slow one, look the same from outside.
   */
  private async unavailable(began: number, cause: unknown): Promise<DomainError> {
    const left = began + this.options.providerTimeoutMs - this.clock.now();
    if (left > 0) await (this.options.wait ?? sleep)(left);
    return new DomainError(
      ErrorCode.SSO_PROVIDER_UNAVAILABLE,
      'the sign-in provider could not be reached; try again later',
      { retryAfterSeconds: 5 },
      { cause },
    );
  }

  /** A start of the tenant from the address, counted; 429 past SSO_STARTS_PER_MINUTE_PER_ADDRESS or _PER_TENANT. */
  private async admitStart(tenantId: string, clientAddress: string | null): Promise<void> {
    const starts = this.options.starts;
    if (!starts) return;
    for (const [key, limit] of [
      [`sso:start:address:${clientAddress ?? 'unknown'}`, starts.perAddress],
      [`sso:start:tenant:${tenantId}`, starts.perTenant],
    ] as const) {
      const hit = await starts.windows.hit(key, limit, START_WINDOW_MS, 1);
      if (!hit.allowed)
        throw new DomainError(ErrorCode.RATE_LIMITED, 'too many single sign-ins started for this tenant or from this address; retry later', {
          retryAfterSeconds: Math.max(1, Math.ceil(hit.waitMs / 1000)),
        });
    }
  }

  private openPending(cookie: string | undefined): Pending | null {
    if (!cookie || cookie.length > 2000) return null;
    try {
      const pending = JSON.parse(this.box.open(PENDING_AAD, cookie)) as Pending;
      return pending.expiresAt > this.clock.now() ? pending : null;
    } catch {
      return null;
    }
  }

  /** The issuer, normalised and checked without DNS (SsoAddresses.parse: https, the URL policy's host rules). */
  private checkIssuer(value: unknown): string {
    const url = this.options.addresses.parse(value, 'issuer');
    if (url.search || url.hash) throw invalid('issuer', 'issuer must be an https URL without credentials, query or fragment');
    return url.href.replace(/\/$/, '');
  }

  private checkDomains(value: unknown): string[] {
    if (!Array.isArray(value) || !value.length || value.length > 50)
      throw invalid('allowedDomains', 'allowedDomains must list 1 to 50 email domains, such as ["example.com"]');
    const domains = value.map((d) => (typeof d === 'string' ? d.trim().toLowerCase() : ''));
    const bad = domains.find((d) => !DOMAIN.test(d));
    if (bad !== undefined) throw invalid('allowedDomains', `"${String(bad).slice(0, 100)}" is not a domain name`);
    return [...new Set(domains)];
  }
}

function view(s: SsoSettings): SsoView {
  return {
    issuer: s.issuer,
    clientId: s.clientId,
    clientSecretSet: true,
    allowedDomains: s.allowedDomains,
    defaultRole: s.defaultRole,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}

const notConfigured = () => new DomainError(ErrorCode.SSO_NOT_CONFIGURED, 'this tenant has no single sign-on configured');

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
