import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { DomainError, ErrorCode, KeyedWindowLimiter } from '@shortlink/core';
import { ClientAddressResolver } from './client-address';

/** Who made an API request, as the app's credential verifier established it. */
export interface Principal {
  readonly tenantId: string;
}

/**
 * Checks an API key and says whose it is; rejects with DomainError UNAUTHENTICATED (401) for a
 * missing or unknown key. Bound by each app to its own domain service, so this layer stays
 * generic.
 */
export interface CredentialVerifier {
  verify(apiKey: unknown): Promise<Principal>;
}

export const CREDENTIAL_VERIFIER = Symbol('CREDENTIAL_VERIFIER');
/** Failed key checks allowed per client address and minute (AUTH_FAILURES_PER_MINUTE). */
export const AUTH_FAILURE_LIMITER = Symbol('AUTH_FAILURE_LIMITER');

export type AuthenticatedRequest = FastifyRequest & { principal?: Principal };

/**
 * `x-api-key` → principal. Failed checks are counted per client address; past the limit every
 * attempt from that address gets 429 with Retry-After until the window ends, before any key is
 * looked at, so guessing keys costs a minute per few attempts (docs/design.md, "Security model").
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    @Inject(CREDENTIAL_VERIFIER) private readonly verifier: CredentialVerifier,
    @Inject(AUTH_FAILURE_LIMITER) private readonly failures: KeyedWindowLimiter,
    @Inject(ClientAddressResolver) private readonly addresses: ClientAddressResolver,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const client = this.addresses.of(request.raw);
    const blocked = this.failures.check(client);
    if (!blocked.allowed) {
      throw new DomainError(ErrorCode.RATE_LIMITED, 'too many failed API key checks from this address; retry later', { retryAfterSeconds: blocked.retryAfterSeconds });
    }
    try {
      request.principal = await this.verifier.verify(request.headers['x-api-key']);
    } catch (error) {
      if (error instanceof DomainError && error.code === ErrorCode.UNAUTHENTICATED) this.failures.hit(client);
      throw error;
    }
    return true;
  }
}
