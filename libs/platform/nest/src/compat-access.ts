import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuditContext } from '@shortlink/audit-domain';
import { DomainError, ErrorCode, KeyedWindowLimiter } from '@shortlink/core';
import { PlanRateLimiter, Principal, Scope } from '@shortlink/tenants-domain';
import { AUTH_FAILURE_LIMITER, auditActorOf, CREDENTIAL_VERIFIER, CredentialVerifier, setRateLimitHeaders } from './auth';
import { ClientAddressResolver } from './client-address';

/**
 * The checks of ApiKeyGuard for routes that take their credential elsewhere than `x-api-key` (the
 * compatibility APIs: a YOURLS signature, a Bitly bearer token), so that they are scoped,
 * rate-limited and audited exactly like ours: failed checks counted per client address (429 past
 * AUTH_FAILURES_PER_MINUTE), the route's scope, the tenant's plan window with its RateLimit-*
 * headers, and the audit context of the request. Errors are DomainErrors; the route formats them.
 */
@Injectable()
export class CompatAccess {
  constructor(
    @Inject(CREDENTIAL_VERIFIER) private readonly verifier: CredentialVerifier,
    @Inject(AUTH_FAILURE_LIMITER) private readonly failures: KeyedWindowLimiter,
    @Inject(ClientAddressResolver) private readonly addresses: ClientAddressResolver,
    @Inject(PlanRateLimiter) private readonly plans: PlanRateLimiter,
  ) {}

  /** The principal of an API key (our keys, as `x-api-key` takes them). */
  keyPrincipal(request: FastifyRequest, apiKey: unknown): Promise<Principal> {
    return this.checked(request, () => this.verifier.verify(apiKey));
  }

  /** Runs a credential check; an UNAUTHENTICATED refusal is counted against the client address (RATE_LIMITED past the limit). */
  async checked(request: FastifyRequest, verify: () => Promise<Principal>): Promise<Principal> {
    try {
      return await verify();
    } catch (error) {
      if (error instanceof DomainError && error.code === ErrorCode.UNAUTHENTICATED) this.countFailure(request);
      throw error;
    }
  }

  /** Counts one failed credential check of the request's client address; past the limit, RATE_LIMITED. */
  countFailure(request: FastifyRequest): void {
    const counted = this.failures.hit(this.addresses.of(request.raw));
    if (!counted.allowed)
      throw new DomainError(ErrorCode.RATE_LIMITED, 'too many failed credential checks from this address; retry later', {
        retryAfterSeconds: counted.retryAfterSeconds,
      });
  }

  /** The scope check and the plan's window of an authenticated request; its audit context when admitted. */
  async admit(request: FastifyRequest, reply: FastifyReply, principal: Principal, scope: Scope): Promise<AuditContext> {
    if (!principal.scopes.includes(scope)) throw new DomainError(ErrorCode.INSUFFICIENT_SCOPE, `this key lacks the ${scope} scope`, { scope });
    const decision = await this.plans.request(principal.tenantId, principal.plan);
    setRateLimitHeaders(reply, decision);
    if (!decision.allowed)
      throw new DomainError(ErrorCode.RATE_LIMITED, `the ${principal.plan} plan allows ${decision.limit} requests a minute per tenant; retry later`, {
        retryAfterSeconds: decision.resetSeconds,
      });
    return { actor: auditActorOf(principal, scope), clientAddress: this.addresses.of(request.raw) };
  }
}
