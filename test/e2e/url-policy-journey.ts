import { randomUUID } from 'crypto';
import { domainToASCII } from 'url';
import { eventually } from '@shortlink/harness';
import { postBatch } from './batch-journey';
import { API_KEY } from './support';
import { api } from './tenant-journey';

/** The fields that carry a target, each given `target` beside a harmless value. */
const TARGET_FIELDS = {
  url: (target: string) => ({ url: target }),
  variants: (target: string) => ({
    url: 'https://example.com/base',
    variants: [
      { url: 'https://example.com/a', weight: 1 },
      { url: target, weight: 1 },
    ],
  }),
  geoTargets: (target: string) => ({ url: 'https://example.com/base', geoTargets: { DE: 'https://example.com/de', FR: target } }),
  deviceTargets: (target: string) => ({ url: 'https://example.com/base', deviceTargets: { ios: 'https://example.com/ios', android: target } }),
} as const;
type TargetField = keyof typeof TARGET_FIELDS;
const FIELDS = Object.keys(TARGET_FIELDS) as TargetField[];
/** The same fields as an edit: the base url is left as it is. */
const editOf = (field: TargetField, target: string) => {
  const { url, ...options } = TARGET_FIELDS[field](target);
  return field === 'url' ? { url } : options;
};

/** `code reason` of a problem (the reason of a URL_NOT_ALLOWED), or the status of a success. */
const outcome = (res: { status: number; body: Record<string, unknown> }) =>
  res.status < 300 ? String(res.status) : `${String(res.body.code)} ${String(res.body.reason ?? '')}`.trim();

/**
 * Domain and URL-policy items as a tenant and the operator meet them over HTTP, on any
 * profile: a target on a tenant's domain (added at run time) is refused as a loop; a host with two
 * trailing dots is refused for what it is; a tenant domain is a bare host name. `second`, when
 * given, is another generation instance on the same databases: it learns a new tenant domain
 * within REDIRECT_TENANT_REFRESH_MS (1 s), as the redirect does.
 */
export function describeUrlPolicyJourney(generation: () => string, second?: () => string) {
  const newTenant = async () => {
    const created = await api(generation(), 'POST', '/api/v1/admin/tenants', API_KEY, { name: `policy-${randomUUID().slice(0, 8)}`, plan: 'paid' });
    if (created.status !== 201) throw new Error(`creating a tenant answered ${created.status}: ${created.text}`);
    return { tenantId: created.body.tenant.id as string, apiKey: created.body.apiKey as string };
  };
  const create = (base: string, key: string, body: object) => api(base, 'POST', '/api/v1/links', key, body);
  const addDomain = (tenantId: string, domain: string) => api(generation(), 'POST', `/api/v1/admin/tenants/${tenantId}/domains`, API_KEY, { domain });
  const bulkEdit = async (key: string, codes: string[], edit: object) => {
    const res = await fetch(`${generation()}/api/v1/links/bulk`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ links: codes, edit }),
    });
    expect(res.status).toBe(200);
    return (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { status: number; problem?: { code: string; reason?: string } });
  };
  const batch = async (key: string, rows: object[]) =>
    (
      await postBatch(
        generation(),
        key,
        rows.map((r) => `${JSON.stringify(r)}\n`),
      )
    ).lines.map((l) => (l.problem ? `${l.problem.code} ${String((l.problem as { reason?: string }).reason ?? '')}`.trim() : String(l.status)));

  describe('domains and the URL policy', () => {
    it('refuses a target on a tenant’s domain, added at run time, as a loop: for its owner and any other tenant, in every field, on create, edit, bulk edit and batch', async () => {
      const acme = await newTenant();
      const other = await newTenant();
      const domain = `go-${randomUUID().slice(0, 8)}.acme.test`;
      const before = await create(generation(), other.apiKey, { url: `https://${domain}/before` });
      expect(before.status).toBe(201); // not one of ours yet: an ordinary target
      expect((await addDomain(acme.tenantId, domain)).status).toBe(201);
      // The instance that added it refuses at once.
      for (const field of FIELDS) {
        for (const target of [`https://${domain}/loop2`, `https://${domain.toUpperCase()}./x`, `http://${domain}:8080/x`]) {
          expect({ field, target, owner: outcome(await create(generation(), acme.apiKey, { ...TARGET_FIELDS[field](target), domain })) }).toEqual({
            field,
            target,
            owner: 'URL_NOT_ALLOWED redirect-loop',
          });
          expect({ field, target, other: outcome(await create(generation(), other.apiKey, TARGET_FIELDS[field](target))) }).toEqual({
            field,
            target,
            other: 'URL_NOT_ALLOWED redirect-loop',
          });
        }
        expect({
          field,
          edit: outcome(await api(generation(), 'PATCH', `/api/v1/links/${before.body.code}`, other.apiKey, editOf(field, `https://${domain}/edit`))),
        }).toEqual({ field, edit: 'URL_NOT_ALLOWED redirect-loop' });
      }
      const bulk = await bulkEdit(other.apiKey, [before.body.code as string], { geoTargets: { DE: `https://${domain}/bulk` } });
      expect(bulk.map((l) => [l.status, l.problem?.code, l.problem?.reason])).toEqual([[400, 'URL_NOT_ALLOWED', 'redirect-loop']]);
      const rows = [{ url: `https://${domain}/batch` }, TARGET_FIELDS.variants(`https://${domain}/batch`), { url: 'https://example.com/batch-ok' }];
      expect(await batch(other.apiKey, rows)).toEqual(['URL_NOT_ALLOWED redirect-loop', 'URL_NOT_ALLOWED redirect-loop', '201']);
      // A subdomain is the tenant's website, not a host we serve.
      expect((await create(generation(), other.apiKey, { url: `https://www.${domain}/` })).status).toBe(201);
    });

    if (second) {
      it('lets another generation instance learn a domain added at run time within its refresh (REDIRECT_TENANT_REFRESH_MS), and forget a removed one', async () => {
        const acme = await newTenant();
        const other = await newTenant();
        const domain = `late-${randomUUID().slice(0, 8)}.acme.test`;
        const target = { url: `https://${domain}/chain` };
        expect((await create(second(), other.apiKey, target)).status).toBe(201);
        expect((await addDomain(acme.tenantId, domain)).status).toBe(201);
        await eventually(
          `the second instance refusing ${domain}`,
          async () => outcome(await create(second(), other.apiKey, target)) === 'URL_NOT_ALLOWED redirect-loop',
          5000,
          100,
        );
        expect((await api(generation(), 'DELETE', `/api/v1/admin/tenants/${acme.tenantId}/domains/${domain}`, API_KEY)).status).toBe(204);
        expect((await create(generation(), other.apiKey, target)).status).toBe(201);
        await eventually(`the second instance accepting ${domain} again`, async () => (await create(second(), other.apiKey, target)).status === 201, 5000, 100);
      });
    }

    it('strips every trailing dot before the checks: two dots are refused in every field, for what the host is', async () => {
      const { apiKey } = await newTenant();
      const base = await create(generation(), apiKey, { url: 'https://example.com/dots' });
      const cases: Array<[string, string]> = [
        ['http://127.0.0.1../', 'URL_NOT_ALLOWED ip-literal'],
        ['http://localhost../x', 'URL_NOT_ALLOWED local-host'],
        ['https://bit.ly../x', 'URL_NOT_ALLOWED shortener'],
        ['https://example.com../x', 'INVALID_URL'],
      ];
      for (const field of FIELDS) {
        for (const [target, expected] of cases) {
          expect({ field, target, create: outcome(await create(generation(), apiKey, TARGET_FIELDS[field](target))) }).toEqual({
            field,
            target,
            create: expected,
          });
          expect({ field, target, edit: outcome(await api(generation(), 'PATCH', `/api/v1/links/${base.body.code}`, apiKey, editOf(field, target))) }).toEqual({
            field,
            target,
            edit: expected,
          });
        }
      }
      expect(
        await batch(
          apiKey,
          cases.map(([target]) => ({ url: target })),
        ),
      ).toEqual(cases.map(([, expected]) => expected));
    });

    it('gives a tenant only a bare host name as its domain: go.acme.com@evil.com is refused, not read as evil.com', async () => {
      const { tenantId } = await newTenant();
      const run = randomUUID().slice(0, 8);
      for (const domain of [
        `go.acme-${run}.com@evil-${run}.com`,
        `user@evil-${run}.com`,
        `https://evil-${run}.com`,
        `evil-${run}.com:8443`,
        `evil-${run}.com/path`,
        `evil-${run}.com.`,
        '127.0.0.1',
        '[::1]',
      ]) {
        const res = await addDomain(tenantId, domain);
        expect({ domain, status: res.status, code: res.body.code, field: res.body.field }).toEqual({
          domain,
          status: 400,
          code: 'VALIDATION_FAILED',
          field: 'domain',
        });
      }
      expect((await api(generation(), 'GET', `/api/v1/admin/tenants/${tenantId}/domains`, API_KEY)).body.domains).toEqual([]);
      // An IDN is taken, in punycode.
      const idn = await addDomain(tenantId, ` Bücher-${run}.Example `);
      expect(idn.body.domain).toBe(domainToASCII(`bücher-${run}.example`));
      expect(idn.body.domain).toMatch(/^xn--/);
      expect((await api(generation(), 'GET', `/api/v1/admin/tenants/${tenantId}/domains`, API_KEY)).body.domains).toEqual([idn.body.domain]);
    });
  });
}
