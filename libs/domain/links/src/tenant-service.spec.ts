import { Tenant } from './tenant';
import { TenantService } from './tenant-service';
import { TenantStore } from './ports';

class MapTenants implements TenantStore {
  byHash = new Map<string, Tenant>();
  async findByApiKeyHash(h: string) {
    return this.byHash.get(h) ?? null;
  }
  async createWithApiKey(t: Tenant, h: string) {
    if (this.byHash.has(h)) return false;
    this.byHash.set(h, t);
    return true;
  }
  async countTenants() {
    return new Set(this.byHash.values()).size;
  }
}

describe('TenantService', () => {
  it('bootstraps a tenant for an unknown key once, also when other tenants exist', async () => {
    const store = new MapTenants();
    const service = new TenantService(store);
    await service.bootstrap('sl_first_key_0123456789');
    const created = await service.bootstrap('sl_second_key_0123456789');
    expect(created).not.toBeNull();
    expect(await service.bootstrap('sl_second_key_0123456789')).toBeNull();
    expect((await service.authenticate('sl_second_key_0123456789')).id).toBe(created!.id);
    expect(await store.countTenants()).toBe(2);
  });

  it('rejects missing and unknown keys, and reports a broken tenant store as a 503 code', async () => {
    const service = new TenantService(new MapTenants());
    await expect(service.authenticate(undefined)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await expect(service.authenticate('sl_unknown_key_123')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    const broken = new TenantService({ findByApiKeyHash: async () => Promise.reject(new Error('ECONNREFUSED')) } as unknown as TenantStore);
    await expect(broken.authenticate('sl_some_key_12345')).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
  });

  it('creates the operator tenant with a generated key on a first run only', async () => {
    const store = new MapTenants();
    const service = new TenantService(store);
    const key = await service.bootstrapFirstRun();
    expect(key).toMatch(/^sl_[0-9A-Za-z]{32}$/);
    expect((await service.authenticate(key!)).plan).toBe('paid');
    expect(await service.bootstrapFirstRun()).toBeNull();
    expect(await store.countTenants()).toBe(1);
  });
});
