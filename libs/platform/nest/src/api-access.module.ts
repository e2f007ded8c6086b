import { Global, Module } from '@nestjs/common';
import { AuditLog } from '@shortlink/audit-domain';
import { SecondFactorService, SessionClients, SessionService } from '@shortlink/people-domain';
import { PlanRateLimiter, TenantService } from '@shortlink/tenants-domain';
import { API_ACCESS_PORTS, API_ACCESS_PROVIDERS, ApiKeyGuard, CREDENTIAL_VERIFIER, SESSION_VERIFIER } from './auth';
import { Lifecycle } from './lifecycle';
import { AUDIT_LOG_PROVIDER, PEOPLE_SESSION_PORTS, PEOPLE_SESSION_PROVIDERS } from './people/session.providers';

/**
 * Who is calling, for every context of an app with a tenant API: keys and people's sessions behind
 * one guard, the plans' limits, the tenants, and the audit log that sign-ins and changes write to.
 * Global, so that each context's controllers use ApiKeyGuard without importing each other.
 */
@Global()
@Module({
  providers: [Lifecycle, ...API_ACCESS_PROVIDERS, AUDIT_LOG_PROVIDER, ...PEOPLE_SESSION_PROVIDERS],
  exports: [ApiKeyGuard, CREDENTIAL_VERIFIER, PlanRateLimiter, TenantService, AuditLog, SecondFactorService, SessionService, SessionClients, SESSION_VERIFIER],
})
export class ApiAccessModule {}

/** The ports ApiAccessModule injects. */
export const API_ACCESS_MODULE_PORTS: readonly symbol[] = [...new Set([...API_ACCESS_PORTS, ...PEOPLE_SESSION_PORTS])];
