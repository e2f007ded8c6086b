import { Registry } from 'prom-client';
import { TenantDirectory } from '@shortlink/tenants-domain';
import { InMemoryDomainOwnershipStore, InMemoryTenantStore } from '@shortlink/tenants-domain/testing';
import { tlsAllowedRoute } from './tls-allowed.route';

describe('GET /internal/tls-allowed', () => {
  it('allows a certificate only for a verified domain of an active tenant, as the directory last read them', async () => {
    const tenants = new InMemoryTenantStore();
    const ownership = new InMemoryDomainOwnershipStore(tenants);
    for (const id of ['active', 'suspended']) tenants.tenants.set(id, { id, name: id, plan: 'paid', status: 'active', createdAt: new Date() });
    await tenants.addDomain('active', 'go.acme.test');
    await tenants.addDomain('suspended', 'go.gone.test');
    const pending = {
      ...(await ownership.find('go.acme.test'))!,
      domain: 'new.acme.test',
      status: 'pending' as const,
      verifiedBy: null,
      token: 't'.repeat(32),
    };
    await ownership.claim(pending, 10);
    await tenants.updateTenant('suspended', { status: 'suspended' });
    const directory = new TenantDirectory(tenants, { refreshMs: 60_000 });
    const registry = new Registry();
    const ask = tlsAllowedRoute(directory, registry);
    const answer = async (domain?: string) => {
      const reply = await ask(new URLSearchParams(domain === undefined ? {} : { domain }));
      return { status: reply.status, body: reply.body as { code?: string } };
    };
    expect((await answer('go.acme.test')).status).toBe(403); // not read yet
    await directory.refresh();
    expect(await answer('go.acme.test')).toEqual({ status: 200, body: { domain: 'go.acme.test', allowed: true } });
    expect((await answer('GO.ACME.TEST.')).status).toBe(200);
    for (const host of ['new.acme.test', 'go.gone.test', 'sho.rt', 'x.go.acme.test', 'go.acme.test:8443']) {
      expect({ host, ...(await answer(host)) }).toMatchObject({ host, status: 403, body: { code: 'TLS_NOT_ALLOWED' } });
    }
    expect(await answer()).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
    expect(await answer('')).toMatchObject({ status: 400 });
    const metrics = await registry.getSingleMetricAsString('shortlink_tls_allowed_total');
    expect(metrics).toContain('shortlink_tls_allowed_total{answer="allowed"} 2');
    expect(metrics).toContain('shortlink_tls_allowed_total{answer="refused"} 6');
  });
});
