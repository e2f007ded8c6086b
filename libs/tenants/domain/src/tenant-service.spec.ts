import { ApiKeyService } from './api-keys';
import { ApiKeyVerifier } from './credentials';
import { TenantService } from './tenant-service';
import { TenantStore } from './ports';
import { SCOPES } from './tenant';
import { InMemoryTenantStore } from './testing/in-memory-tenant-store';

const setup = (keyCacheMs = 1000) => {
  const store = new InMemoryTenantStore();
  let t = Date.parse('2026-12-03T10:00:00Z');
  const clock = { now: () => t, advance: (ms: number) => void (t += ms) };
  return {
    store,
    clock,
    service: new TenantService(store, { domainCacheMs: keyCacheMs, serviceDomains: ['sho.rt'] }, clock),
    keys: new ApiKeyService(store, {}, clock),
    verifier: new ApiKeyVerifier(store, { cacheMs: keyCacheMs, clock }),
  };
};

describe('TenantService, ApiKeyService and ApiKeyVerifier', () => {
  it('bootstraps the operator key with every scope on the paid plan, once, also when other tenants exist', async () => {
    const { store, service, verifier } = setup();
    await service.bootstrap('sl_first_key_0123456789');
    const created = await service.bootstrap('sl_second_key_0123456789');
    expect(created).toMatchObject({ plan: 'paid', status: 'active' });
    expect(await service.bootstrap('sl_second_key_0123456789')).toBeNull();
    expect(await verifier.verify('sl_second_key_0123456789')).toMatchObject({ tenantId: created!.id, plan: 'paid', scopes: SCOPES });
    expect(await store.countTenants()).toBe(2);
  });

  it('restores an existing bootstrap key at boot: every scope, unrevoked, its tenant active', async () => {
    const { store, service, keys, verifier } = setup(0);
    const operator = (await service.bootstrap('sl_operator_key_0123456'))!;
    const [hash] = store.keys.keys();
    const admin = await verifier.verify('sl_operator_key_0123456');
    const deputy = await verifier.verify((await keys.createKey(admin, { name: 'deputy', scopes: [...SCOPES] })).apiKey);
    await keys.revokeKey(deputy, admin.keyId);
    await store.updateTenant(operator.id, { status: 'suspended' });
    store.keys.set(hash, { ...store.keys.get(hash)!, scopes: ['links:read'] });
    await expect(verifier.verify('sl_operator_key_0123456')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(await service.bootstrap('sl_operator_key_0123456')).toBeNull();
    expect(await verifier.verify('sl_operator_key_0123456')).toMatchObject({ tenantId: operator.id, keyId: admin.keyId, scopes: SCOPES });
  });

  it('lets a key revoke only keys whose every scope it holds itself', async () => {
    const { service, keys, verifier } = setup(0);
    await service.bootstrap('sl_operator_key_0123456');
    const admin = await verifier.verify('sl_operator_key_0123456');
    const writer = await verifier.verify((await keys.createKey(admin, { name: 'writer', scopes: ['links:write'] })).apiKey);
    const reader = await keys.createKey(admin, { name: 'reader', scopes: ['links:read'] });
    const twin = await keys.createKey(admin, { name: 'twin', scopes: ['links:write'] });
    await expect(keys.revokeKey(writer, admin.keyId)).rejects.toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
      details: { scopes: ['links:read', 'analytics:read', 'audit:read', 'members:write', 'keys:write', 'conversions:write', 'admin'] },
    });
    await expect(keys.revokeKey(writer, reader.key.id)).rejects.toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { scopes: ['links:read'] } });
    expect((await verifier.verify('sl_operator_key_0123456')).keyId).toBe(admin.keyId);
    await keys.revokeKey(writer, twin.key.id);
    await keys.revokeKey(admin, reader.key.id);
    await expect(verifier.verify(twin.apiKey)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await expect(keys.revokeKey(writer, twin.key.id)).rejects.toMatchObject({ code: 'KEY_NOT_FOUND' });
    // Another tenant's key is not found, whatever the caller's scopes.
    const { issued } = await service.createTenant({ name: 'acme', plan: 'free' });
    await expect(keys.revokeKey(admin, issued.key.id)).rejects.toMatchObject({ code: 'KEY_NOT_FOUND' });
  });

  it("caps a tenant's active keys by its plan; revoked and expired keys free their place", async () => {
    const store = new InMemoryTenantStore();
    let t = Date.parse('2026-12-03T10:00:00Z');
    const clock = { now: () => t };
    const service = new TenantService(store, {}, clock);
    const keys = new ApiKeyService(store, { maxKeys: { free: 3, paid: 5 } }, clock);
    const verifier = new ApiKeyVerifier(store, { cacheMs: 0, clock });
    const { issued } = await service.createTenant({ name: 'acme', plan: 'free' });
    const principal = await verifier.verify(issued.apiKey);
    const second = await keys.createKey(principal, { name: 'second' });
    await keys.createKey(principal, { name: 'third', expiresAt: new Date(t + 60_000).toISOString() });
    await expect(keys.createKey(principal, { name: 'fourth' })).rejects.toMatchObject({ code: 'KEY_LIMIT_REACHED', details: { limit: 3 } });
    t += 61_000;
    await keys.createKey(principal, { name: 'after the expiry' });
    await expect(keys.createKey(principal, { name: 'fourth' })).rejects.toMatchObject({ code: 'KEY_LIMIT_REACHED' });
    await keys.revokeKey(principal, second.key.id);
    await keys.createKey(principal, { name: 'after the revocation' });
    expect((await keys.listKeys(principal.tenantId)).filter((k) => k.key.revokedAt === null)).toHaveLength(4); // one of them expired
  });

  it('rejects missing, unknown, revoked and expired keys alike, and a broken store as a 503 code', async () => {
    const { service, clock, keys, verifier } = setup(0);
    await expect(verifier.verify(undefined)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await expect(verifier.verify('sl_unknown_key_123')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    const { issued } = await service.createTenant({ name: 'acme', plan: 'free' });
    const principal = await verifier.verify(issued.apiKey);
    const expiring = await keys.createKey(principal, { name: 'short-lived', expiresAt: new Date(clock.now() + 60_000).toISOString() });
    expect((await verifier.verify(expiring.apiKey)).keyId).toBe(expiring.key.id);
    clock.advance(60_000);
    await expect(verifier.verify(expiring.apiKey)).rejects.toMatchObject({ code: 'UNAUTHENTICATED', message: 'unknown, revoked or expired API key' });
    await keys.revokeKey(principal, issued.key.id);
    await expect(verifier.verify(issued.apiKey)).rejects.toMatchObject({ code: 'UNAUTHENTICATED', message: 'unknown, revoked or expired API key' });
    const broken = new ApiKeyVerifier({ findByKeyHash: () => Promise.reject(new Error('ECONNREFUSED')) } as unknown as TenantStore);
    await expect(broken.verify('sl_some_key_12345')).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
  });

  it('trusts a checked key for the cache time only: a revocation takes effect within it', async () => {
    const { service, clock, keys, verifier } = setup(1000);
    const { issued } = await service.createTenant({ name: 'acme', plan: 'free' });
    await keys.revokeKey(await verifier.verify(issued.apiKey), issued.key.id);
    // The cache's own clock is real time; the bound is what matters: after it, the key fails.
    await new Promise((r) => setTimeout(r, 1050));
    clock.advance(1050);
    await expect(verifier.verify(issued.apiKey)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('answers TENANT_SUSPENDED for a suspended tenant and lets it back in when reactivated', async () => {
    const { service, verifier } = setup(0);
    const { tenant, issued } = await service.createTenant({ name: 'acme', plan: 'free' });
    expect(await service.updateTenant(tenant.id, { status: 'suspended' })).toMatchObject({ status: 'suspended' });
    await expect(verifier.verify(issued.apiKey)).rejects.toMatchObject({ code: 'TENANT_SUSPENDED' });
    await service.updateTenant(tenant.id, { status: 'active', plan: 'paid' });
    expect(await verifier.verify(issued.apiKey)).toMatchObject({ plan: 'paid' });
    await expect(service.updateTenant(tenant.id, { status: 'gone' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(service.updateTenant('nope', { plan: 'paid' })).rejects.toMatchObject({ code: 'TENANT_NOT_FOUND' });
  });

  it('issues keys with the default scopes, never more than the caller has, and keeps only hash and prefix', async () => {
    const { service, store, keys, verifier } = setup(0);
    const { issued } = await service.createTenant({ name: 'acme', plan: 'free' });
    expect(issued.apiKey).toMatch(/^sl_[0-9A-Za-z]{32}$/);
    expect(issued.key).toMatchObject({
      prefix: issued.apiKey.slice(0, 10),
      scopes: ['links:read', 'links:write', 'analytics:read', 'audit:read', 'members:write', 'keys:write', 'conversions:write'],
    });
    const principal = await verifier.verify(issued.apiKey);
    const readOnly = await keys.createKey(principal, { name: 'dashboard', scopes: ['analytics:read'] });
    expect(readOnly.key.scopes).toEqual(['analytics:read']);
    await expect(keys.createKey(principal, { name: 'escalate', scopes: ['admin'] })).rejects.toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
    await expect(keys.createKey(principal, { name: 'bad', scopes: ['links:everything'] })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(keys.createKey(principal, { name: 'past', expiresAt: '2020-01-01T00:00:00Z' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    const narrow = await verifier.verify(readOnly.apiKey);
    expect((await keys.createKey(narrow, { name: 'inherits' })).key.scopes).toEqual(['analytics:read']);
    const stored = JSON.stringify([...store.keys.entries()]);
    expect(stored).not.toContain(issued.apiKey);
    expect(stored).not.toContain(readOnly.apiKey);
  });

  it("gives domains to one tenant, never the service's own, and says who owns them", async () => {
    const { service } = setup(0);
    const a = (await service.createTenant({ name: 'a', plan: 'free' })).tenant;
    const b = (await service.createTenant({ name: 'b', plan: 'free' })).tenant;
    expect(await service.addDomain(a.id, 'Links.Example.COM')).toBe('links.example.com');
    await expect(service.addDomain(b.id, 'links.example.com')).rejects.toMatchObject({ code: 'DOMAIN_TAKEN' });
    await expect(service.addDomain(b.id, 'sho.rt')).rejects.toMatchObject({ code: 'DOMAIN_TAKEN' });
    // Nor a name under one of the service's domains, at any depth, however it is spelt.
    for (const under of ['x.sho.rt', 'X.Sho.RT', 'a.b.sho.rt'])
      await expect(service.addDomain(b.id, under)).rejects.toMatchObject({ code: 'DOMAIN_TAKEN', details: { serviceDomain: 'sho.rt' } });
    // A name that only ends like one is someone else's.
    expect(await service.addDomain(b.id, 'xsho.rt')).toBe('xsho.rt');
    await expect(service.addDomain(b.id, 'localhost')).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(service.addDomain('nope', 'x.example.com')).rejects.toMatchObject({ code: 'TENANT_NOT_FOUND' });
    expect(await service.owns(a.id, 'links.example.com')).toBe(true);
    expect(await service.owns(b.id, 'links.example.com')).toBe(false);
    await service.removeDomain(a.id, 'links.example.com');
    expect(await service.owns(a.id, 'links.example.com')).toBe(false);
  });

  it('takes only a bare host name as a tenant domain: a URL parser would read go.acme.com@evil.com as evil.com', async () => {
    const { service, store } = setup(0);
    const a = (await service.createTenant({ name: 'a', plan: 'free' })).tenant;
    for (const domain of [
      'go.acme.com@evil.com',
      'user:pw@go.acme.com',
      'https://go.acme.com',
      'go.acme.com:8080',
      'go.acme.com/path',
      'go.acme.com?x',
      'go.acme.com#x',
      'go.acme.com.',
      'go.acme.com..',
      '.go.acme.com',
      'go..acme.com',
      'go.acme.com\\evil.com',
      'go.acme.com%2Fevil.com',
      'go acme.com',
      '127.0.0.1',
      '[::1]',
      '8.8.8.8',
      'go_acme.com',
      '',
      42,
    ]) {
      await expect(service.addDomain(a.id, domain)).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'domain' } });
    }
    expect(await store.allDomains()).toEqual([]);
    expect(await service.addDomain(a.id, ' Bücher.Example ')).toBe('xn--bcher-kva.example');
    expect(await service.addDomain(a.id, 'пример.рф')).toBe('xn--e1afmkfd.xn--p1ai');
    expect(await service.addDomain(a.id, 'go-1.acme.com')).toBe('go-1.acme.com');
  });

  it('records key and tenant changes with their actor and address, in the store, never the key itself (docs/design.md, "Audit log")', async () => {
    const { store, service, keys, verifier } = setup();
    const operator = { actor: { type: 'operator' as const, id: 'op-key', name: 'operator' }, clientAddress: '198.51.100.1' };
    const { tenant, issued } = await service.createTenant({ name: 'acme', plan: 'free' }, operator);
    const first = await verifier.verify(issued.apiKey);
    const asFirst = { actor: { type: 'key' as const, id: first.actor.id, name: first.actor.name }, clientAddress: '203.0.113.9' };
    const made = await keys.createKey(first, { name: 'deploy', scopes: ['links:write'] }, asFirst);
    await keys.revokeKey(first, made.key.id, asFirst);
    await service.updateTenant(tenant.id, { plan: 'paid' }, operator);
    await service.updateTenant(tenant.id, { plan: 'paid' }, operator); // nothing changed: nothing recorded
    await service.updateTenant(tenant.id, { status: 'suspended', name: 'acme2' }, operator);
    const entries = store.audit.entries.map((e) => ({ log: e.log, action: e.action, actor: e.actor.name, target: e.target.id, address: e.clientAddress }));
    expect(entries).toEqual([
      { log: 'operator', action: 'tenant.created', actor: 'operator', target: tenant.id, address: '198.51.100.1' },
      { log: tenant.id, action: 'key.created', actor: 'first key', target: made.key.id, address: '203.0.113.9' },
      { log: tenant.id, action: 'key.revoked', actor: 'first key', target: made.key.id, address: '203.0.113.9' },
      { log: 'operator', action: 'tenant.plan_changed', actor: 'operator', target: tenant.id, address: '198.51.100.1' },
      { log: 'operator', action: 'tenant.updated', actor: 'operator', target: tenant.id, address: '198.51.100.1' },
    ]);
    expect(store.audit.entries[1].details).toMatchObject({ name: 'deploy', prefix: made.apiKey.slice(0, 10), scopes: ['links:write'] });
    expect(store.audit.entries[3].changes).toEqual({ plan: { from: 'free', to: 'paid' } });
    expect(store.audit.entries[4].changes).toEqual({ name: { from: 'acme', to: 'acme2' }, status: { from: 'active', to: 'suspended' } });
    const text = JSON.stringify(store.audit.entries);
    for (const secret of [issued.apiKey, made.apiKey]) expect(text).not.toContain(secret);
  });
});
