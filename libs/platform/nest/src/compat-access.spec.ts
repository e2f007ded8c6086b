import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, ErrorCode, KeyedWindowLimiter } from '@shortlink/core';
import { LocalRateWindows, PlanRateLimiter, type Principal } from '@shortlink/tenants-domain';
import { ClientAddressResolver } from './client-address';
import { CompatAccess } from './compat-access';

const principal: Principal = {
  tenantId: 't1',
  keyId: 'k1',
  scopes: ['links:read'],
  plan: 'free',
  actor: { kind: 'key', id: 'k1', name: 'ci', tenantId: 't1', person: null },
};
const limits = { requestsPerMinute: 2, batchRowsPerDay: 10, maxKeys: 5, concurrentBatches: 1, invitationsPerHour: 1, conversionsPerMonth: 10 };
const request = { raw: { socket: { remoteAddress: '203.0.113.9' }, headers: {} }, headers: {} } as unknown as FastifyRequest;

function reply() {
  const headers: Record<string, string> = {};
  const fake = {
    header(k: string, v: string) {
      headers[k.toLowerCase()] = v;
      return fake;
    },
  };
  return { headers, reply: fake as unknown as FastifyReply };
}

function access(verify: (key: unknown) => Promise<Principal>, failuresPerMinute = 2) {
  return new CompatAccess(
    { verify },
    new KeyedWindowLimiter({ limit: failuresPerMinute, windowMs: 60_000 }),
    new ClientAddressResolver([]),
    new PlanRateLimiter(new LocalRateWindows(), { free: limits, paid: limits }),
  );
}

const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    return (e as DomainError).code;
  }
  return null;
};

describe('CompatAccess', () => {
  it('counts refused credentials per client address, then answers RATE_LIMITED; a valid key still passes', async () => {
    const checks = access(async (key) => {
      if (key !== 'good') throw new DomainError(ErrorCode.UNAUTHENTICATED, 'unknown key');
      return principal;
    });
    expect(await codeOf(checks.keyPrincipal(request, 'bad'))).toBe(ErrorCode.UNAUTHENTICATED);
    expect(await codeOf(checks.keyPrincipal(request, 'bad'))).toBe(ErrorCode.UNAUTHENTICATED);
    expect(await codeOf(checks.keyPrincipal(request, 'bad'))).toBe(ErrorCode.RATE_LIMITED);
    expect(await checks.keyPrincipal(request, 'good')).toBe(principal);
  });

  it('refuses a scope the key lacks before counting the request', async () => {
    const { reply: r, headers } = reply();
    expect(await codeOf(access(async () => principal).admit(request, r, principal, 'links:write'))).toBe(ErrorCode.INSUFFICIENT_SCOPE);
    expect(headers).toEqual({});
  });

  it('counts admitted requests in the plan’s window with the RateLimit headers, and gives the audit context', async () => {
    const checks = access(async () => principal);
    const first = reply();
    expect(await checks.admit(request, first.reply, principal, 'links:read')).toEqual({
      actor: { type: 'key', id: 'k1', name: 'ci' },
      clientAddress: '203.0.113.9',
    });
    expect(first.headers).toMatchObject({ 'ratelimit-limit': '2', 'ratelimit-remaining': '1' });
    await checks.admit(request, reply().reply, principal, 'links:read');
    const third = reply();
    expect(await codeOf(checks.admit(request, third.reply, principal, 'links:read'))).toBe(ErrorCode.RATE_LIMITED);
    expect(third.headers['ratelimit-remaining']).toBe('0');
  });
});
