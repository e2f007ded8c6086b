import { TenantDirectory } from './tenant-directory';
import { InMemoryTenantStore } from './testing/in-memory-tenant-store';

describe('TenantDirectory', () => {
  const tenant = (id: string, status: 'active' | 'suspended' = 'active') => ({ id, name: id, plan: 'free' as const, status, createdAt: new Date() });

  it('knows tenant domains (case-insensitive) and suspended tenants after a refresh, not before', async () => {
    const store = new InMemoryTenantStore();
    store.tenants.set('a', tenant('a'));
    store.tenants.set('b', tenant('b', 'suspended'));
    await store.addDomain('a', 'Links.Acme.Test');
    const directory = new TenantDirectory(store, { refreshMs: 60_000 });
    expect(directory.isTenantDomain('links.acme.test')).toBe(false);
    expect(directory.isSuspended('b')).toBe(false);
    await directory.refresh();
    expect(directory.isTenantDomain('links.acme.test')).toBe(true);
    expect(directory.isTenantDomain('other.test')).toBe(false);
    expect(directory.isSuspended('b')).toBe(true);
    expect(directory.isSuspended('a')).toBe(false);
    await store.updateTenant('b', { status: 'active' });
    await store.removeDomain('a', 'Links.Acme.Test');
    await directory.refresh();
    expect(directory.isSuspended('b')).toBe(false);
    expect(directory.isTenantDomain('links.acme.test')).toBe(false);
  });

  it('keeps the last tables while the store fails, and reports an outage once', async () => {
    const store = new InMemoryTenantStore();
    store.tenants.set('b', tenant('b', 'suspended'));
    await store.addDomain('b', 'b.test');
    const outages: string[] = [];
    const directory = new TenantDirectory(store, { refreshMs: 60_000, onOutage: (e) => outages.push((e as Error).message) });
    await directory.refresh();
    const allDomains = store.allDomains;
    store.allDomains = () => Promise.reject(new Error('meta database down'));
    await directory.refresh();
    await directory.refresh();
    expect(directory.isSuspended('b')).toBe(true);
    expect(directory.isTenantDomain('b.test')).toBe(true);
    expect(outages).toEqual(['meta database down']);
    store.allDomains = allDomains;
    await directory.refresh();
    store.allDomains = () => Promise.reject(new Error('down again'));
    await directory.refresh();
    expect(outages).toEqual(['meta database down', 'down again']);
  });

  it('does not hold the start longer than bootWaitMs when the store hangs, and takes the tables once the read ends', async () => {
    const store = new InMemoryTenantStore();
    store.tenants.set('d', tenant('d', 'suspended'));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const suspendedTenantIds = store.suspendedTenantIds.bind(store);
    store.suspendedTenantIds = async () => (await held, suspendedTenantIds());
    const directory = new TenantDirectory(store, { refreshMs: 60_000, bootWaitMs: 50 });
    try {
      await directory.start(); // resolves although the read is still held
      expect(directory.isSuspended('d')).toBe(false);
      release();
      await directory.refresh(); // joins the read in flight
      expect(directory.isSuspended('d')).toBe(true);
    } finally {
      directory.stop();
    }
  });

  it('reads again on its own every refreshMs once started', async () => {
    const store = new InMemoryTenantStore();
    const directory = new TenantDirectory(store, { refreshMs: 20 });
    await directory.start();
    try {
      store.tenants.set('c', tenant('c', 'suspended'));
      const deadline = Date.now() + 2000;
      while (!directory.isSuspended('c') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(directory.isSuspended('c')).toBe(true);
    } finally {
      directory.stop();
    }
  });
});
