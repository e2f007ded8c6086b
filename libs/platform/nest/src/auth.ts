import { CanActivate, ExecutionContext, Inject, Injectable, Optional, Provider } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuditActor, AuditContext } from '@shortlink/audit-domain';
import type { AppConfig } from '@shortlink/config';
import { DomainError, ErrorCode, KeyedWindowLimiter } from '@shortlink/core';
import { csrfMatches, type VerifiedSession } from '@shortlink/people-domain';
import {
  ApiKeyVerifier,
  PlanRateLimiter,
  Principal,
  RATE_WINDOW_STORE,
  RateDecision,
  RateWindowStore,
  Scope,
  TENANT_STORE,
  TenantService,
  TenantStore,
} from '@shortlink/tenants-domain';
import { APP_CONFIG, APP_LOGGER } from './app-tokens';
import { BrowserOrigins } from './browser-origin';
import { ClientAddressResolver } from './client-address';
import { REQUIRED_SCOPE } from './contract';
import type { PinoNestLogger } from './logging';

export type { Principal } from '@shortlink/tenants-domain';

/**
 * Checks an API key and says whose it is; rejects with DomainError UNAUTHENTICATED (401) for a
 * missing, unknown, revoked or expired key and TENANT_SUSPENDED (403) for a suspended tenant.
 */
export interface CredentialVerifier {
  verify(apiKey: unknown): Promise<Principal>;
}

export const CREDENTIAL_VERIFIER = Symbol('CREDENTIAL_VERIFIER');
/**
 * Checks a session cookie and says whose it is (people-domain's SessionService); apps that bind it
 * accept people's sessions the way they accept keys (docs/design.md, "People and sessions").
 */
export interface SessionVerifier {
  verify(token: unknown): Promise<VerifiedSession>;
}

export const SESSION_VERIFIER = Symbol('SESSION_VERIFIER');
/** The session cookie's name. */
export const SESSION_COOKIE = 'sl_session';
/** Methods that change nothing: a session needs no CSRF token for them. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A cookie of the request's Cookie header, or undefined. */
export function cookieOf(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/**
 * The Set-Cookie value of a session (docs/design.md, "People and sessions"): HttpOnly (no script
 * reads it), SameSite=Lax (other sites' forms and fetches do not carry it on writes), Secure when
 * served over https, for the API's paths, ending with the session's absolute lifetime. An empty
 * token with `maxAgeSeconds` 0 clears it.
 */
export function sessionCookie(token: string, maxAgeSeconds: number, secure: boolean): string {
  return [
    `${SESSION_COOKIE}=${token}`,
    'Path=/api',
    `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

/** Failed key checks allowed per client address and minute (AUTH_FAILURES_PER_MINUTE). */
export const AUTH_FAILURE_LIMITER = Symbol('AUTH_FAILURE_LIMITER');

/** A request the guard let in: whose it is, and what the audit log records of it (docs/design.md, "Audit log"). */
export type AuthenticatedRequest = FastifyRequest & { principal?: Principal; audit?: AuditContext; session?: VerifiedSession & { token: string } };

/**
 * The audit log's actor of a principal: the one place a principal becomes an actor (docs/design.md,
 * "Audit log"). A key or a person is named by its own kind, a key with the person it acts for; on
 * a route that needs the `admin` scope, whoever calls acts as the operator.
 */
export function auditActorOf(principal: Principal, scope: Scope): AuditActor {
  const actor = principal.actor;
  const person = actor.kind === 'key' ? actor.person : null;
  return {
    type: scope === 'admin' ? 'operator' : actor.kind,
    id: actor.id,
    name: actor.name,
    ...(person ? { onBehalfOf: { id: person.id, name: person.email } } : {}),
  };
}

/** The audit context the guard gave a request; a route without the guard asking for one is a programming error. */
export function auditContextOf(request: AuthenticatedRequest): AuditContext {
  if (!request.audit) throw new Error(`route ${request.routeOptions?.url ?? request.url} records an audit entry but is not guarded`);
  return request.audit;
}

/**
 * `x-api-key` (or, without one, the session cookie where the app binds SESSION_VERIFIER) →
 * principal → scope → plan (docs/design.md, "Security model", "Tenants, keys and plans" and
 * "People and sessions"). A person's principal holds its role's scopes, so the same scope check
 * decides for both; a write with a session also needs its CSRF token in `x-csrf-token` (403
 * CSRF_TOKEN_INVALID) and must not come from another site's page (403 CROSS_SITE_REQUEST:
 * BrowserOrigins), a write with a key needs neither. Every key is checked (one hash and one cached look-up); failed checks are counted
 * per client address, and past the limit a failed check from that address gets 429 instead of 401
 * until the window ends. A valid key is never refused by that count: behind a shared NAT, one
 * guesser must not lock out everyone else, and a guesser still learns nothing from a 429. The
 * route's scope comes from its contract. An accepted request is counted against its tenant's plan,
 * and the answer carries the RateLimit-* headers either way.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    @Inject(CREDENTIAL_VERIFIER) private readonly verifier: CredentialVerifier,
    @Inject(AUTH_FAILURE_LIMITER) private readonly failures: KeyedWindowLimiter,
    @Inject(ClientAddressResolver) private readonly addresses: ClientAddressResolver,
    @Inject(PlanRateLimiter) private readonly plans: PlanRateLimiter,
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(BrowserOrigins) private readonly origins: BrowserOrigins,
    @Optional() @Inject(SESSION_VERIFIER) private readonly sessions: SessionVerifier | null = null,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<AuthenticatedRequest>();
    let principal: Principal;
    const sessionToken = this.sessions && request.headers['x-api-key'] === undefined ? cookieOf(request, SESSION_COOKIE) : undefined;
    try {
      if (sessionToken !== undefined) {
        const session = await this.sessions!.verify(sessionToken);
        if (!SAFE_METHODS.has(request.method)) {
          if (!csrfMatches(session.csrfToken, request.headers['x-csrf-token']))
            throw new DomainError(ErrorCode.CSRF_TOKEN_INVALID, 'a write with a session cookie needs its csrfToken (GET /api/v1/me) in x-csrf-token');
          this.origins.check(request);
        }
        request.session = { ...session, token: sessionToken };
        principal = session.principal;
      } else principal = await this.verifier.verify(request.headers['x-api-key']);
    } catch (error) {
      if (error instanceof DomainError && error.code === ErrorCode.UNAUTHENTICATED) {
        const counted = this.failures.hit(this.addresses.of(request.raw));
        if (!counted.allowed) {
          throw new DomainError(ErrorCode.RATE_LIMITED, 'too many failed API key checks from this address; retry later', {
            retryAfterSeconds: counted.retryAfterSeconds,
          });
        }
      }
      throw error;
    }
    const scope = this.reflector.getAllAndOverride<Scope | undefined>(REQUIRED_SCOPE, [context.getHandler(), context.getClass()]);
    // A guarded route without a scope is a programming error, never an open door.
    if (!scope) throw new Error(`route ${request.routeOptions?.url ?? request.url} is guarded but names no scope (RequireScope or its contract)`);
    if (!principal.scopes.includes(scope)) {
      const by =
        principal.actor.kind === 'person' ? 'role' : principal.actor.person ? `key (within the ${principal.actor.person.role} role of its person)` : 'key';
      throw new DomainError(ErrorCode.INSUFFICIENT_SCOPE, `this ${by} lacks the ${scope} scope`, { scope });
    }
    // One window per tenant, whatever key it uses: minting keys does not multiply the plan.
    const decision = await this.plans.request(principal.tenantId, principal.plan);
    setRateLimitHeaders(http.getResponse<FastifyReply>(), decision);
    if (!decision.allowed) {
      throw new DomainError(ErrorCode.RATE_LIMITED, `the ${principal.plan} plan allows ${decision.limit} requests a minute per tenant; retry later`, {
        retryAfterSeconds: decision.resetSeconds,
      });
    }
    request.principal = principal;
    // The client address as the rate limits see it (TRUSTED_PROXIES honoured: ClientAddressResolver).
    request.audit = { actor: auditActorOf(principal, scope), clientAddress: this.addresses.of(request.raw) };
    return true;
  }
}

/** The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers): limit, what is left, seconds to reset. */
export function setRateLimitHeaders(reply: FastifyReply, decision: RateDecision): void {
  reply
    .header('RateLimit-Limit', String(decision.limit))
    .header('RateLimit-Remaining', String(decision.remaining))
    .header('RateLimit-Reset', String(decision.resetSeconds));
}

/**
 * What an app with a tenant API provides: the key verifier of the tenants domain as its credential
 * verifier, the tenants (and their domains), the plan limiter over the shared windows, and the guard.
 * Needs the TENANT_STORE and RATE_WINDOW_STORE ports.
 */
export const API_ACCESS_PROVIDERS: readonly Provider[] = [
  {
    provide: TenantService,
    inject: [TENANT_STORE, APP_CONFIG],
    useFactory: (store: TenantStore, config: AppConfig) => new TenantService(store, { serviceDomains: config.links.domains }),
  },
  { provide: CREDENTIAL_VERIFIER, inject: [TENANT_STORE], useFactory: (store: TenantStore) => new ApiKeyVerifier(store) },
  {
    provide: PlanRateLimiter,
    inject: [RATE_WINDOW_STORE, APP_CONFIG, APP_LOGGER],
    useFactory: (windows: RateWindowStore, config: AppConfig, logger: PinoNestLogger) =>
      new PlanRateLimiter(windows, config.plans, (down, error) =>
        down
          ? logger.warn(
              `plan limits: the shared windows failed (${(error as Error)?.message}); each instance counts on its own until they answer`,
              'PlanRateLimiter',
            )
          : logger.log('plan limits: shared windows answer again', 'PlanRateLimiter'),
      ),
  },
  ApiKeyGuard,
];

/** The ports API_ACCESS_PROVIDERS injects. */
export const API_ACCESS_PORTS: readonly symbol[] = [TENANT_STORE, RATE_WINDOW_STORE];
