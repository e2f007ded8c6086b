import { randomUUID } from 'crypto';
import { Principal } from './credentials';
import { challengePath, DomainProbes, ProbeFailure, ServedCertificate, TenantDomain, txtRecordName, txtRecordValue } from './domain-ownership';
import { DomainOwnershipOptions, DomainOwnershipService } from './domain-ownership-service';
import { Tenant } from './tenant';
import { TenantService } from './tenant-service';
import { InMemoryDomainOwnershipStore } from './testing/in-memory-domain-ownership-store';
import { InMemoryTenantStore } from './testing/in-memory-tenant-store';

/** The network as the checks see it, set by each test: TXT records, HTTP answers, the front's certificates; every question counted. */
class ScriptedProbes implements DomainProbes {
  readonly txtRecords = new Map<string, string[]>();
  readonly pages = new Map<string, string>();
  readonly certificates = new Map<string, ServedCertificate>();
  dnsDown = false;
  questions = 0;

  async txt(name: string): Promise<string[]> {
    this.questions++;
    await new Promise((r) => setImmediate(r));
    if (this.dnsDown) throw new ProbeFailure('DNS could not answer: ETIMEOUT', false);
    return this.txtRecords.get(name) ?? [];
  }
  async fetch(domain: string, path: string) {
    const body = this.pages.get(`${domain}${path}`);
    if (body === undefined) throw new ProbeFailure(`http://${domain}${path}: ECONNREFUSED`, false);
    return { status: 200, body };
  }
  async certificate(domain: string) {
    const served = this.certificates.get(domain);
    if (!served) throw new Error(`no valid certificate for ${domain}`);
    return served;
  }
}

const DAY = 86_400_000;

function setup(plan: 'free' | 'paid' = 'free', methods: DomainOwnershipOptions['methods'] = ['dns']) {
  let t = Date.parse('2026-12-07T10:00:00Z');
  const clock = { now: () => t, advance: (ms: number) => void (t += ms) };
  const tenantStore = new InMemoryTenantStore();
  const store = new InMemoryDomainOwnershipStore(tenantStore);
  const probes = new ScriptedProbes();
  const tenants = new TenantService(tenantStore, { domainCacheMs: 0, serviceDomains: ['sho.rt'] }, clock);
  const told: string[] = [];
  const seen: string[] = [];
  const options = (holder: string): DomainOwnershipOptions => ({
    maxDomains: { free: 2, paid: 10 },
    policy: { backoffMs: 1000, backoffMaxMs: 8000, recheckMs: 3_600_000, unverifyAfter: 2, retryWindowMs: DAY },
    methods,
    firstCheckMs: 500,
    leaseMs: 60_000,
    holder,
    events: { verified: (d) => told.push(`verified ${d.domain}`), unverified: (d) => told.push(`unverified ${d.domain}`) },
    observer: {
      checked: (o) => seen.push(o),
      certificate: (o) => seen.push(`certificate ${o}`),
      checkFailed: (domain, error) => seen.push(`errored ${domain}: ${(error as Error).message}`),
    },
    clock,
  });
  const service = new DomainOwnershipService(store, tenants, tenantStore, probes, options('one'));
  const tenant: Tenant = { id: randomUUID(), name: 'acme', plan, status: 'active', createdAt: new Date(t) };
  tenantStore.tenants.set(tenant.id, tenant);
  const principal: Principal = {
    tenantId: tenant.id,
    keyId: 'k1',
    actor: { kind: 'key', id: 'k1', name: 'ci', tenantId: tenant.id, person: null },
    scopes: ['links:read', 'links:write'],
    plan,
  };
  const audit = { actor: { type: 'key' as const, id: 'k1', name: 'ci' }, clientAddress: '203.0.113.9' };
  const prove = (d: TenantDomain) => probes.txtRecords.set(txtRecordName(d.domain), [txtRecordValue(d.token!)]);
  const actions = () => tenantStore.audit.entries.filter((e) => e.log === tenant.id).map((e) => `${e.action} ${e.target.id} ${e.actor.type}`);
  return { clock, tenantStore, store, probes, tenants, service, options, tenant, principal, audit, told, seen, prove, actions };
}

describe('DomainOwnershipService', () => {
  it('adds a pending domain with its token and entry; refuses a taken one, the service’s own, a bad name and one over the plan’s cap', async () => {
    const { service, principal, audit, tenantStore, actions } = setup('free');
    const added = await service.add(principal, 'Go.Acme.Test', audit);
    expect(added).toMatchObject({ domain: 'go.acme.test', tenantId: principal.tenantId, status: 'pending', verifiedBy: null, failures: 0 });
    expect(added.token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(added.nextCheckAt!.getTime() - added.createdAt.getTime()).toBe(500);
    expect(actions()).toEqual(['domain.added go.acme.test key']);
    await expect(service.add(principal, 'go.acme.test')).rejects.toMatchObject({ code: 'DOMAIN_TAKEN' });
    const other = randomUUID();
    tenantStore.tenants.set(other, { id: other, name: 'o', plan: 'paid', status: 'active', createdAt: new Date() });
    await expect(service.add({ ...principal, tenantId: other }, 'go.acme.test')).rejects.toMatchObject({ code: 'DOMAIN_TAKEN' });
    await expect(service.add(principal, 'sho.rt')).rejects.toMatchObject({ code: 'DOMAIN_TAKEN' });
    await expect(service.add(principal, 'links.sho.rt')).rejects.toMatchObject({ code: 'DOMAIN_TAKEN', details: { serviceDomain: 'sho.rt' } });
    await expect(service.add(principal, 'https://go.acme.test/')).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'domain' } });
    await service.add(principal, 'links.acme.test');
    await expect(service.add(principal, 'third.acme.test')).rejects.toMatchObject({ code: 'DOMAIN_LIMIT_REACHED', details: { limit: 2 } });
    // Another tenant's domain is not found, whoever holds it.
    await expect(service.get(other, 'go.acme.test')).rejects.toMatchObject({ code: 'DOMAIN_NOT_FOUND' });
  });

  it('tells the observer of a check that threw (not swallowed) and takes the domain again when its lease ends', async () => {
    const { service, principal, audit, store, clock, prove, seen } = setup();
    prove(await service.add(principal, 'go.acme.test', audit));
    clock.advance(500);
    const saveCheck = store.saveCheck.bind(store);
    store.saveCheck = async () => {
      throw new Error('meta database: connection lost');
    };
    expect(await service.runDue()).toBe(1);
    expect(seen).toEqual(['passed', 'errored go.acme.test: meta database: connection lost']);
    store.saveCheck = saveCheck;
    clock.advance(1000);
    expect(await service.runDue()).toBe(0); // still leased by the check that threw
    clock.advance(60_000);
    expect(await service.runDue()).toBe(1);
    expect(await service.get(principal.tenantId, 'go.acme.test')).toMatchObject({ status: 'verified' });
  });

  it('verifies a domain once its TXT record is there: the entry, the event, links may go on it; then reads its certificate', async () => {
    const { service, principal, audit, tenants, clock, probes, prove, told, seen, actions } = setup();
    const added = await service.add(principal, 'go.acme.test', audit);
    await expect(tenants.owns(principal.tenantId, 'go.acme.test')).rejects.toMatchObject({ code: 'DOMAIN_NOT_VERIFIED', details: { domainStatus: 'pending' } });
    expect(await service.runDue()).toBe(0); // not due before DOMAIN_FIRST_CHECK_MS
    clock.advance(500);
    expect(await service.runDue()).toBe(1);
    expect(await service.get(principal.tenantId, 'go.acme.test')).toMatchObject({
      status: 'pending',
      failures: 1,
      lastFailure: expect.stringContaining('no TXT'),
    });
    prove(added);
    clock.advance(1000);
    expect(await service.runDue()).toBe(1);
    const verified = await service.get(principal.tenantId, 'go.acme.test');
    expect(verified).toMatchObject({ status: 'verified', verifiedBy: 'dns', failures: 0, lastFailure: null });
    expect(await tenants.owns(principal.tenantId, 'go.acme.test')).toBe(true);
    expect(told).toEqual(['verified go.acme.test']);
    expect(actions()).toEqual(['domain.added go.acme.test key', 'domain.verified go.acme.test system']);
    // Checked once more a backoff step later: that check reads the certificate the front got meanwhile.
    expect(verified.nextCheckAt!.getTime() - clock.now()).toBe(1000);
    probes.certificates.set('go.acme.test', { expiresAt: new Date(clock.now() + 90 * DAY), fingerprint: 'a'.repeat(64) });
    clock.advance(1000);
    await service.runDue();
    expect((await service.get(principal.tenantId, 'go.acme.test')).certificate).toMatchObject({ fingerprint: 'a'.repeat(64), error: null });
    // Re-checked after recheckMs: the same certificate is not counted again; a renewed one is.
    clock.advance(3_600_000);
    await service.runDue();
    probes.certificates.set('go.acme.test', { expiresAt: new Date(clock.now() + 90 * DAY), fingerprint: 'b'.repeat(64) });
    clock.advance(3_600_000);
    await service.runDue();
    // The front serving none: counted, and the expiry last read stays, counting down.
    probes.certificates.delete('go.acme.test');
    clock.advance(3_600_000);
    await service.runDue();
    const last = (await service.get(principal.tenantId, 'go.acme.test')).certificate!;
    expect(last).toMatchObject({ fingerprint: 'b'.repeat(64), error: expect.stringContaining('no valid certificate') });
    expect(last.expiresAt!.getTime()).toBe(clock.now() - 2 * 3_600_000 + 90 * DAY);
    expect(seen.filter((s) => s.startsWith('certificate'))).toEqual([
      'certificate issued',
      'certificate unchanged',
      'certificate issued',
      'certificate failed',
    ]);
    expect(told).toEqual(['verified go.acme.test']);
  });

  it('unverifies a domain whose record is gone after the re-checks in a row; a resolver that cannot answer does not count', async () => {
    const { service, principal, clock, probes, prove, told, actions, tenants } = setup();
    const added = await service
      .checkNow(principal.tenantId, (await service.add(principal, 'go.acme.test')).domain)
      .then(() => service.get(principal.tenantId, 'go.acme.test'));
    expect(added.status).toBe('pending');
    prove(added);
    expect(await service.checkNow(principal.tenantId, 'go.acme.test')).toMatchObject({ status: 'verified' });
    probes.txtRecords.clear();
    const recheck = async () => {
      clock.advance((await service.get(principal.tenantId, 'go.acme.test')).nextCheckAt!.getTime() - clock.now());
      await service.runDue();
      return service.get(principal.tenantId, 'go.acme.test');
    };
    expect(await recheck()).toMatchObject({ status: 'verified', failures: 1 });
    probes.dnsDown = true;
    expect(await recheck()).toMatchObject({ status: 'verified', failures: 1, lastFailure: expect.stringContaining('ETIMEOUT') });
    probes.dnsDown = false;
    expect(await recheck()).toMatchObject({ status: 'unverified', failures: 2 });
    await expect(tenants.owns(principal.tenantId, 'go.acme.test')).rejects.toMatchObject({
      code: 'DOMAIN_NOT_VERIFIED',
      details: { domainStatus: 'unverified' },
    });
    expect(told).toEqual(['verified go.acme.test', 'unverified go.acme.test']);
    expect(actions()).toEqual(['domain.verified go.acme.test system', 'domain.unverified go.acme.test system']);
    // The record back: verified again at the next retry.
    prove(added);
    expect(await recheck()).toMatchObject({ status: 'verified' });
    expect(told).toEqual(['verified go.acme.test', 'unverified go.acme.test', 'verified go.acme.test']);
  });

  it('proves a domain by its HTTP token when that method is on', async () => {
    const { service, principal, probes } = setup('free', ['dns', 'http']);
    const added = await service.add(principal, 'go.acme.test');
    expect(await service.checkNow(principal.tenantId, 'go.acme.test')).toMatchObject({
      status: 'pending',
      lastFailure: expect.stringContaining('ECONNREFUSED'),
    });
    probes.pages.set(`go.acme.test${challengePath(added.token!)}`, added.token!);
    expect(await service.checkNow(principal.tenantId, 'go.acme.test')).toMatchObject({ status: 'verified', verifiedBy: 'http' });
  });

  it('gives each due check to one instance: two verifiers side by side check every domain once', async () => {
    const { service, principal, options, store, tenants, tenantStore, probes, clock, told } = setup('paid');
    const other = new DomainOwnershipService(store, tenants, tenantStore, probes, options('two'));
    const domains = await Promise.all(Array.from({ length: 8 }, (_, i) => service.add(principal, `d${i}.acme.test`)));
    domains.forEach((d) => probes.txtRecords.set(txtRecordName(d.domain), [txtRecordValue(d.token!)]));
    clock.advance(500);
    const [a, b] = await Promise.all([service.runDue(3), other.runDue(100)]);
    expect(a + b).toBe(8);
    expect(probes.questions).toBe(8);
    expect(told.sort()).toEqual(domains.map((d) => `verified ${d.domain}`).sort());
    // Asked for while another instance holds it: not run twice, answered as it stands.
    clock.advance(1000);
    const held = await store.takeDue(new Date(clock.now()), new Date(clock.now() + 60_000), 'three', 1);
    expect(await service.checkNow(principal.tenantId, held[0].domain)).toMatchObject({ status: 'verified' });
    expect(probes.questions).toBe(8);
  });

  it('removes a domain of the tenant with its entry; another tenant’s is not found', async () => {
    const { service, principal, audit, actions } = setup();
    await service.add(principal, 'go.acme.test');
    await expect(service.remove(randomUUID(), 'go.acme.test')).rejects.toMatchObject({ code: 'DOMAIN_NOT_FOUND' });
    await service.remove(principal.tenantId, 'GO.acme.test', audit);
    expect(await service.listOf(principal.tenantId)).toEqual([]);
    expect(actions()).toEqual(['domain.removed go.acme.test key']);
    await expect(service.remove(principal.tenantId, 'go.acme.test')).rejects.toMatchObject({ code: 'DOMAIN_NOT_FOUND' });
  });
});
