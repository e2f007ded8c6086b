import { randomUUID } from 'crypto';
import { defaultSettingsOf, DomainSettings, DomainSettingsStore, TenantStore } from '@shortlink/tenants-domain';

const aDomain = () => `d${randomUUID().slice(0, 8)}.example.com`;
const second = () => new Date(Math.floor(Date.now() / 1000) * 1000);

const everything = (domain: string, version: number): DomainSettings => ({
  domain,
  notFoundRedirect: 'https://acme.example/not-found',
  pathNotFoundRedirect: 'https://acme.example/no-such-page',
  rootRedirect: 'https://acme.example/',
  expiredRedirect: 'https://acme.example/expired',
  branding: {
    name: 'Acme – Ünïcode 🚀',
    logo: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
    accentColor: '#0a7f5c',
  },
  robots: 'allow',
  appleAppSiteAssociation: { applinks: { apps: [], details: [{ appID: 'ABCDE12345.com.acme.app', paths: ['/*'] }] } },
  androidAssetLinks: [
    {
      relation: ['delegate_permission/common.handle_all_urls'],
      target: { namespace: 'android_app', package_name: 'com.acme.app', sha256_cert_fingerprints: [Array(32).fill('AB').join(':')] },
    },
  ],
  hsts: { maxAge: 31_536_000, includeSubDomains: true, preload: false },
  trackConversions: true,
  conversionParam: 'ref',
  version,
  updatedAt: second(),
});

/**
 * One behaviour, every backend (docs/design.md, "Domain settings"): SQLite and the in-memory double
 * in unit runs, the MySQL meta database in integration runs. `tenants` is the tenant store of the
 * same meta database: a domain taken from its tenant loses its settings.
 */
export function describeDomainSettingsStoreContract(
  backend: string,
  open: () => Promise<{ settings: DomainSettingsStore; tenants: TenantStore; close(): Promise<void> }>,
) {
  describe(`domain settings store contract: ${backend}`, () => {
    let store: DomainSettingsStore;
    let tenants: TenantStore;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ settings: store, tenants, close } = await open());
    });
    afterAll(() => close());

    it('finds nothing for a domain never saved, and stores a first version only once', async () => {
      const domain = aDomain();
      expect(await store.find(domain)).toBeNull();
      expect(await store.findMany([domain])).toEqual([]);
      expect(await store.findMany([])).toEqual([]);
      const first = everything(domain, 1);
      expect(await store.save(first, 0)).toBe(true);
      expect(await store.save({ ...first, robots: 'disallow' }, 0)).toBe(false);
      expect(await store.find(domain)).toEqual(first);
      expect((await store.versions()).find((v) => v.domain === domain)).toEqual({ domain, version: 1 });
    });

    it('replaces only the version it was given, and keeps every value as given (documents, unicode, nulls)', async () => {
      const domain = aDomain();
      await store.save(everything(domain, 1), 0);
      const cleared: DomainSettings = { ...defaultSettingsOf(domain), rootRedirect: 'https://acme.example/home', version: 2, updatedAt: second() };
      expect(await store.save(cleared, 5)).toBe(false);
      expect(await store.save(cleared, 1)).toBe(true);
      expect(await store.find(domain)).toEqual(cleared);
      expect(await store.save({ ...cleared, version: 3 }, 1)).toBe(false); // 1 is no longer the stored version
      expect((await store.find(domain))?.version).toBe(2);
    });

    it('finds many at once, only those stored, by domain', async () => {
      const [a, b, none] = [aDomain(), aDomain(), aDomain()];
      await store.save(everything(b, 1), 0);
      await store.save(everything(a, 1), 0);
      const found = await store.findMany([b, none, a]);
      expect(found.map((s) => s.domain)).toEqual([a, b].sort());
      expect(found[0]).toEqual(everything(found[0].domain, 1));
    });

    it('puts a domain taken from its tenant back to the defaults, one version on; another tenant cannot take it away', async () => {
      const tenant = { id: randomUUID(), name: 'acme', plan: 'free' as const, status: 'active' as const, createdAt: second() };
      await tenants.createWithApiKey(tenant, `hash-${randomUUID()}`, {
        id: randomUUID(),
        name: 'k',
        prefix: 'sl_x',
        scopes: [],
        expiresAt: null,
        person: null,
      });
      const domain = aDomain();
      expect(await tenants.addDomain(tenant.id, domain)).toBe(true);
      await store.save(everything(domain, 1), 0);
      expect(await tenants.removeDomain(randomUUID(), domain)).toBe(false);
      expect(await store.find(domain)).toEqual(everything(domain, 1));
      expect(await tenants.removeDomain(tenant.id, domain)).toBe(true);
      const reset = (await store.find(domain))!;
      expect({ ...reset, updatedAt: null }).toEqual({ ...defaultSettingsOf(domain), version: 2 });
      expect(reset.updatedAt).toBeInstanceOf(Date);
      // A domain without settings leaves none behind.
      const bare = aDomain();
      await tenants.addDomain(tenant.id, bare);
      await tenants.removeDomain(tenant.id, bare);
      expect(await store.find(bare)).toBeNull();
    });
  });
}
