import { Counter, Registry } from 'prom-client';
import { normalizeHost } from '@shortlink/core';
import { AdminHandler, problem } from '@shortlink/nest-platform';
import { TenantDirectory } from '@shortlink/tenants-domain';

/**
 * `GET /internal/tls-allowed?domain=<host>` on the operator listener: the question Caddy's on-demand
 * TLS asks before it obtains a certificate (docs/design.md, "Custom domains and TLS"). 200 only for a
 * verified domain of an active tenant, from the tenant directory this instance holds (as fresh as
 * REDIRECT_TENANT_REFRESH_MS); 403 for any other host, so that nobody makes the front obtain
 * certificates for names that are not ours; 400 without a host.
 */
export function tlsAllowedRoute(directory: TenantDirectory, registry: Registry): AdminHandler {
  const asked = new Counter({
    name: 'shortlink_tls_allowed_total',
    help: 'Questions of the TLS front whether a host may get a certificate, by answer',
    labelNames: ['answer'],
    registers: [registry],
  });
  for (const answer of ['allowed', 'refused']) asked.inc({ answer }, 0);
  const refuse = (status: number, code: string, detail: string) => ({
    status,
    contentType: 'application/problem+json',
    body: problem(status, code, detail, '/internal/tls-allowed'),
  });
  return (query) => {
    const raw = query.get('domain');
    if (!raw || raw.length > 253) return refuse(400, 'VALIDATION_FAILED', 'domain: a host name is required (?domain=<host>)');
    const host = normalizeHost(raw);
    if (!directory.mayHaveCertificate(host)) {
      asked.inc({ answer: 'refused' });
      return refuse(403, 'TLS_NOT_ALLOWED', `${host} is not a verified domain of an active tenant`);
    }
    asked.inc({ answer: 'allowed' });
    return { status: 200, body: { domain: host, allowed: true } };
  };
}
