import { DomainError, ErrorCode } from '@shortlink/core';
import { SequenceCodeStrategy } from '@shortlink/link-codes';
import { IdBlock, LinkCreation, LinkService, SegmentIdAllocator } from '@shortlink/links-domain';
import { InMemoryLinkRepository, plainPasswords, RecordingChangeFeed, RecordingLinkCache, relayOver } from '@shortlink/links-domain/testing';
import { HostResolver, UrlPolicy } from '@shortlink/url-policy';
import { BatchCreator } from './batch-creator';
import { BulkLinks } from './bulk-links';
import { BatchOutcome, BatchRow } from './chunk';
import { InMemoryBatchRecords } from './testing/in-memory-batch-records';

const DAY = 86_400_000;

/**
 * Every target a link carries (url, variants, geo and device targets) goes through one URL
 * policy, DNS included, on create, edit, bulk edit and batch creation; the tenants' domains count as ours.
 */
describe('the URL policy on every target of a link', () => {
  /** A resolver of test names: `inner.example` is a name that points into the private network. */
  const ADDRESSES: Record<string, string[]> = {
    'example.com': ['93.184.216.34'],
    'public.example': ['93.184.216.35'],
    'inner.example': ['10.0.0.7'],
    // A tenant's domain points at the redirect: a public address, so only the policy's own list can refuse it.
    'go.acme.test': ['93.184.216.40'],
  };

  const setup = ({ dns = true } = {}) => {
    let next = 1n;
    const ids = { allocateBlock: async (_: string, size: number): Promise<IdBlock> => ({ start: next, end: (next += BigInt(size)) }) };
    const repo = new InMemoryLinkRepository();
    const cache = new RecordingLinkCache();
    const codes = new SequenceCodeStrategy('secret');
    const resolved: string[] = [];
    const addresses = { ...ADDRESSES };
    const resolver: HostResolver = {
      addresses: async (host) => {
        resolved.push(host);
        if (!addresses[host]) throw new Error(`ENOTFOUND ${host}`);
        return addresses[host];
      },
    };
    // The tenants' domains as a TenantDirectory holds them: changed at run time, read at each check.
    const tenantDomains = new Set(['go.acme.test']);
    const policy = new UrlPolicy({ shortDomains: ['sho.rt'], resolver: dns ? resolver : null }).alsoServing({ isServed: (host) => tenantDomains.has(host) });
    const service = new LinkService(
      {
        links: repo,
        ids: new SegmentIdAllocator(ids, 'links', 10),
        codes,
        events: relayOver(repo, cache, new RecordingChangeFeed()),
        passwords: plainPasswords,
        urls: policy,
        tenantDomains: { owns: async (tenant, domain) => tenant === 'acme' && domain === 'go.acme.test' },
      },
      { defaultDomain: 'sho.rt', sharedDomains: ['sho.rt'], retireForMs: 90 * DAY },
    );
    const bulk = new BulkLinks(service, { maxLinks: 100, concurrency: 4 });
    const batch = new BatchCreator(
      { links: service, repository: repo, sequences: ids, codes, records: new InMemoryBatchRecords() },
      { chunkRows: 10, insertRows: 4, leaseMs: 1000, retentionMs: DAY, sequence: 'links' },
    );
    const runBatch = async (tenantId: string, inputs: ReadonlyArray<Omit<LinkCreation, 'tenantId'>>) => {
      async function* rows(): AsyncGenerator<BatchRow> {
        for (const [index, input] of inputs.entries()) yield { index, text: JSON.stringify(input), input };
      }
      const render = (o: BatchOutcome) => ('link' in o ? `${o.index} created` : `${o.index} ${o.error.code} ${String(o.error.details.reason ?? '')}`.trim());
      const started = await batch.start({
        tenantId,
        idempotencyKey: null,
        rows: rows(),
        render,
        quota: async (n) => ({ granted: n, refusal: new DomainError(ErrorCode.QUOTA_EXCEEDED, 'quota') }),
      });
      let text = '';
      for await (const chunk of started.lines()) text += chunk;
      return text.split('\n').filter(Boolean);
    };
    return { service, bulk, runBatch, resolved, tenantDomains, addresses };
  };

  /** Every way a target can be given, with `target` in the one field named. */
  const withTarget = (field: 'url' | 'variants' | 'geoTargets' | 'deviceTargets' | 'appTargets', target: string): Omit<LinkCreation, 'tenantId'> => {
    const url = 'https://example.com/base';
    if (field === 'url') return { url: target };
    if (field === 'variants')
      return {
        url,
        variants: [
          { url: 'https://public.example/a', weight: 1 },
          { url: target, weight: 1 },
        ],
      };
    if (field === 'geoTargets') return { url, geoTargets: { DE: 'https://public.example/de', FR: target } };
    // An app link is https only (an http one is refused before the policy): the same host over https.
    if (field === 'appTargets') return { url, appTargets: { ios: 'myapp://product/1', android: target.replace(/^http:/, 'https:') } };
    return { url, deviceTargets: { ios: 'https://public.example/ios', android: target } };
  };
  const FIELDS = ['url', 'variants', 'geoTargets', 'deviceTargets', 'appTargets'] as const;
  const reasonOf = (e: unknown) => (e instanceof DomainError ? `${e.code} ${String(e.details.reason ?? '')}`.trim() : String(e));
  const refusal = async (work: Promise<unknown>) => work.then(() => 'accepted', reasonOf);

  it('resolves the targets of options like url, on create and edit: a name pointing into the private network is refused in every field', async () => {
    const { service } = setup();
    const base = await service.create({ tenantId: 't1', url: 'https://example.com/edit-me' });
    const id = { domain: base.domain, code: base.code };
    for (const field of FIELDS) {
      const input = withTarget(field, 'https://inner.example/x');
      expect({ field, create: await refusal(service.create({ tenantId: 't1', ...input })) }).toEqual({ field, create: 'URL_NOT_ALLOWED private-address' });
      const { url: _url, ...options } = input;
      const edit = field === 'url' ? { url: input.url } : options;
      expect({ field, edit: await refusal(service.update('t1', id, edit, null)) }).toEqual({ field, edit: 'URL_NOT_ALLOWED private-address' });
      expect({ field, unresolvable: await refusal(service.create({ tenantId: 't1', ...withTarget(field, 'https://nx.example/') })) }).toEqual({
        field,
        unresolvable: 'URL_NOT_ALLOWED unresolvable',
      });
    }
    expect((await service.get('t1', id)).version).toBe(1); // no refused edit changed it
  });

  it('takes an app URL scheme only as an app target, refuses the dangerous ones with a stable code, and holds https app links to the policy', async () => {
    const { service } = setup();
    const link = await service.create({
      tenantId: 't1',
      url: 'https://example.com/store',
      appTargets: { ios: ' MyApp://product/42?ref="x" ', android: 'https://public.example/app/42' },
    });
    expect(link.appTargets).toEqual({ ios: 'myapp://product/42?ref=%22x%22', android: 'https://public.example/app/42' });
    const id = { domain: link.domain, code: link.code };
    const app = (ios: unknown) => refusal(service.create({ tenantId: 't1', url: 'https://example.com/', appTargets: { ios } }));
    for (const bad of [
      'javascript:alert(1)',
      'JavaScript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'vbscript:msgbox(1)',
      'file:///etc/passwd',
      'blob:https://example.com/x',
      'about:blank',
      'intent://x#Intent;scheme=myapp;S.browser_fallback_url=http%3A%2F%2F10.0.0.1;end',
    ]) {
      expect({ bad, answer: await app(bad) }).toEqual({ bad, answer: 'URL_NOT_ALLOWED dangerous-scheme' });
    }
    expect(await app('https://inner.example/app')).toBe('URL_NOT_ALLOWED private-address');
    expect(await app('https://127.0.0.1/app')).toBe('URL_NOT_ALLOWED ip-literal');
    expect(await app('http://public.example/app')).toBe('INVALID_URL'); // a universal link or app link is https
    expect(await app('myapp://user:pw@x')).toBe('URL_NOT_ALLOWED credentials');
    expect(await app('myapp://a\nb')).toBe('URL_NOT_ALLOWED control-characters');
    expect(await app('no-scheme/path')).toBe('INVALID_URL');
    expect(await app('myapp:')).toBe('INVALID_URL');
    expect(await app(42)).toBe('INVALID_URL');
    expect(await refusal(service.create({ tenantId: 't1', url: 'https://example.com/', appTargets: { desktop: 'myapp://x' } }))).toBe('VALIDATION_FAILED');
    // A custom scheme is an app target's only: never a link's target, device target or variant.
    expect(await refusal(service.create({ tenantId: 't1', url: 'myapp://x' }))).toBe('INVALID_URL');
    expect(await refusal(service.create({ tenantId: 't1', url: 'https://example.com/', deviceTargets: { ios: 'myapp://x' } }))).toBe('INVALID_URL');
    // An edit replaces them (null clears one device, or all).
    expect((await service.update('t1', id, { appTargets: { ios: null, android: 'myapp://b' } }, null)).appTargets).toEqual({ android: 'myapp://b' });
    expect(await refusal(service.update('t1', id, { appTargets: { android: 'javascript:alert(1)' } }, null))).toBe('URL_NOT_ALLOWED dangerous-scheme');
    expect((await service.update('t1', id, { appTargets: null }, null)).appTargets).toBeNull();
  });

  it('names the field of the refused target and resolves each host once per request', async () => {
    const { service, resolved } = setup();
    const error = await service
      .create({
        tenantId: 't1',
        url: 'https://example.com/',
        geoTargets: { DE: 'https://public.example/de', AT: 'https://public.example/at', FR: 'https://inner.example/fr' },
      })
      .catch((e: DomainError) => e);
    expect(error).toMatchObject({ code: 'URL_NOT_ALLOWED', details: { reason: 'private-address' }, message: expect.stringContaining('geoTargets.FR') });
    expect(resolved.sort()).toEqual(['example.com', 'inner.example', 'public.example']);
    const link = await service.create({
      tenantId: 't1',
      url: 'https://example.com/',
      variants: [
        { url: 'https://public.example/a', weight: 1 },
        { url: 'https://public.example/b', weight: 2 },
      ],
    });
    expect(link.variants).toEqual([
      { url: 'https://public.example/a', weight: 1 },
      { url: 'https://public.example/b', weight: 2 },
    ]);
  });

  it('resolves every target of a bulk edit and of a batch row', async () => {
    const { service, bulk, runBatch } = setup();
    const links = await Promise.all([1, 2].map((i) => service.create({ tenantId: 't1', url: `https://example.com/bulk${i}` })));
    const outcomes = [];
    for await (const o of bulk.edit(
      't1',
      links.map((l) => ({ domain: l.domain, code: l.code })),
      { deviceTargets: { android: 'https://inner.example/app' } },
    ))
      outcomes.push(o);
    expect(outcomes.map((o) => ('error' in o ? reasonOf(o.error) : 'edited'))).toEqual(['URL_NOT_ALLOWED private-address', 'URL_NOT_ALLOWED private-address']);
    const lines = await runBatch('t1', [
      withTarget('variants', 'https://inner.example/v'),
      withTarget('geoTargets', 'https://public.example/ok'),
      withTarget('deviceTargets', 'https://inner.example/d'),
    ]);
    expect(lines).toEqual(['0 URL_NOT_ALLOWED private-address', '1 created', '2 URL_NOT_ALLOWED private-address']);
  });

  it('refuses a target on a tenant’s domain as a loop, for its owner and for any other tenant, in every field and every path', async () => {
    const { service, bulk, runBatch, tenantDomains, addresses } = setup();
    const other = await service.create({ tenantId: 't2', url: 'https://example.com/other' });
    for (const field of FIELDS) {
      for (const target of ['https://go.acme.test/loop2', 'https://GO.ACME.TEST./loop2', 'https://go.acme.test../loop2']) {
        for (const tenantId of ['acme', 't2']) {
          const create = await refusal(service.create({ tenantId, ...(tenantId === 'acme' ? { domain: 'go.acme.test' } : {}), ...withTarget(field, target) }));
          expect({ field, target, tenantId, create }).toEqual({ field, target, tenantId, create: 'URL_NOT_ALLOWED redirect-loop' });
        }
      }
    }
    const { url: _url, ...options } = withTarget('variants', 'https://go.acme.test/x');
    expect(await refusal(service.update('t2', { domain: other.domain, code: other.code }, options, null))).toBe('URL_NOT_ALLOWED redirect-loop');
    const outcomes = [];
    for await (const o of bulk.edit('t2', [{ domain: other.domain, code: other.code }], { url: 'https://go.acme.test/x' })) outcomes.push(o);
    expect(outcomes.map((o) => ('error' in o ? reasonOf(o.error) : 'edited'))).toEqual(['URL_NOT_ALLOWED redirect-loop']);
    expect(await runBatch('t2', [{ url: 'https://go.acme.test/a' }, withTarget('geoTargets', 'https://go.acme.test/b')])).toEqual([
      '0 URL_NOT_ALLOWED redirect-loop',
      '1 URL_NOT_ALLOWED redirect-loop',
    ]);
    // Exactly the served host: a subdomain is the tenant's own website, not ours.
    addresses['www.go.acme.test'] = ['93.184.216.36'];
    expect(await refusal(service.create({ tenantId: 't2', url: 'https://www.go.acme.test/' }))).toBe('accepted');
    // A domain given to a tenant at run time is refused from the next check on.
    addresses['late.example'] = ['93.184.216.37'];
    expect(await refusal(service.create({ tenantId: 't2', url: 'https://late.example/' }))).toBe('accepted');
    tenantDomains.add('late.example');
    expect(await refusal(service.create({ tenantId: 't2', url: 'https://late.example/' }))).toBe('URL_NOT_ALLOWED redirect-loop');
  });

  it('refuses hosts with two trailing dots in every field (URL_DNS_CHECK off), for what the host is', async () => {
    const { service } = setup({ dns: false });
    const cases: Array<[string, string]> = [
      ['http://127.0.0.1../', 'URL_NOT_ALLOWED ip-literal'],
      ['http://localhost../x', 'URL_NOT_ALLOWED local-host'],
      ['https://bit.ly../x', 'URL_NOT_ALLOWED shortener'],
      ['https://sho.rt../x', 'URL_NOT_ALLOWED redirect-loop'],
      ['https://example.com../x', 'INVALID_URL'],
    ];
    for (const field of FIELDS) {
      for (const [target, expected] of cases)
        expect({ field, target, got: await refusal(service.create({ tenantId: 't1', ...withTarget(field, target) })) }).toEqual({
          field,
          target,
          got: expected,
        });
    }
  });
});
