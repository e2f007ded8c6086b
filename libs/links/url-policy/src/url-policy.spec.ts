import { parseTarget, UrlPolicy } from './url-policy';

describe('UrlPolicy', () => {
  const policy = new UrlPolicy({
    shortDomains: ['sho.rt', 'go.example:8080'],
    blockList: { blocking: (h) => (h === 'evil.example' || h.endsWith('.evil.example') ? 'evil.example' : null) },
  });
  const reason = (url: string) => {
    try {
      policy.inspect(url);
      return 'ok';
    } catch (e) {
      return (e as { details?: { reason?: string }; code: string }).details?.reason ?? (e as { code: string }).code;
    }
  };

  it('accepts public http(s) URLs and normalises them (IDN to punycode, percent-encoding)', () => {
    expect(policy.inspect('https://EXAMPLE.com/a b?q=1').url).toBe('https://example.com/a%20b?q=1');
    expect(policy.inspect('https://bücher.example/x').host).toBe('xn--bcher-kva.example');
  });

  it('refuses IP literals in every spelling, IPv6 and IPv4-mapped included', () => {
    for (const url of [
      'http://127.0.0.1/',
      'http://2130706433/',
      'http://0x7f000001/',
      'http://0177.0.0.1/',
      'http://127.1/',
      'http://0x7f.1/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[2001:db8::1]/',
      'http://8.8.8.8/',
      'http://%31%32%37.0.0.1/',
    ]) {
      expect({ url, reason: reason(url) }).toEqual({ url, reason: 'ip-literal' });
    }
  });

  it('refuses local names, shorteners, our own domains, block-listed domains, credentials and control characters', () => {
    expect(reason('http://localhost:3000/')).toBe('local-host');
    expect(reason('http://app.localhost/')).toBe('local-host');
    expect(reason('http://printer.local/')).toBe('local-host');
    expect(reason('http://db.internal/')).toBe('local-host');
    expect(reason('http://intranet/')).toBe('local-host');
    expect(reason('https://bit.ly/abc')).toBe('shortener');
    expect(reason('https://www.tinyurl.com/abc')).toBe('shortener');
    expect(reason('https://sho.rt/abc')).toBe('redirect-loop');
    expect(reason('https://GO.example/abc')).toBe('redirect-loop');
    expect(reason('https://shop.evil.example/')).toBe('DOMAIN_BLOCKED');
    expect(reason('https://user:pw@example.com/')).toBe('credentials');
    expect(reason('https://example.com/a\r\nSet-Cookie: x=1')).toBe('control-characters');
    expect(reason('javascript:alert(1)')).toBe('INVALID_URL');
    expect(reason('https://example.com/' + 'é'.repeat(400))).toBe('INVALID_URL');
  });

  it('strips every trailing dot before the checks: `127.0.0.1..` is refused as the address it is', () => {
    expect(reason('http://127.0.0.1../')).toBe('ip-literal');
    expect(reason('http://localhost../x')).toBe('local-host');
    expect(reason('https://bit.ly../x')).toBe('shortener');
    expect(reason('https://sho.rt.../x')).toBe('redirect-loop');
    expect(reason('https://shop.evil.example../')).toBe('DOMAIN_BLOCKED');
    // A public host with more than one trailing dot has an empty label: no resolver takes it.
    expect(reason('https://example.com../x')).toBe('INVALID_URL');
    for (const url of ['http://../', 'http://./', 'http://.example.com/', 'http://example..com/'])
      expect({ url, reason: reason(url) }).toEqual({ url, reason: 'INVALID_URL' });
    // One trailing dot is a fully qualified name: the same host, stored as given.
    expect(policy.inspect('https://example.com./a')).toMatchObject({ host: 'example.com', url: 'https://example.com./a' });
    expect(reason('https://bit.ly./x')).toBe('shortener');
  });

  it('refuses targets on the domains served besides its own (the tenants’), exactly and as they change', () => {
    const tenantDomains = new Set(['go.acme.test']);
    const serving = policy.alsoServing({ isServed: (host) => tenantDomains.has(host) });
    const servingReason = (url: string) => {
      try {
        serving.inspect(url);
        return 'ok';
      } catch (e) {
        return (e as { details?: { reason?: string }; code: string }).details?.reason ?? (e as { code: string }).code;
      }
    };
    for (const url of ['https://go.acme.test/loop2', 'http://GO.acme.test:8443/x', 'https://go.acme.test./x', 'https://go.acme.test../x']) {
      expect({ url, reason: servingReason(url) }).toEqual({ url, reason: 'redirect-loop' });
    }
    expect(reason('https://go.acme.test/loop2')).toBe('ok'); // the policy it came from is unchanged
    expect(servingReason('https://www.go.acme.test/')).toBe('ok'); // the tenant's website, not a domain we serve
    expect(servingReason('https://sho.rt/x')).toBe('redirect-loop'); // the configured ones still count
    expect(servingReason('https://bit.ly/x')).toBe('shortener');
    expect(servingReason('https://added.example/')).toBe('ok');
    tenantDomains.add('added.example');
    expect(servingReason('https://added.example/')).toBe('redirect-loop');
  });

  it('flags homographs and phishing-shaped URLs, not ordinary ones', () => {
    expect(policy.inspect('https://pаypal.com/').flags.map((f) => f.reason)).toContain('homograph');
    expect(policy.inspect('https://paypal.com.secure-login.example/verify').flags.map((f) => f.reason)).toContain('suspicious-keywords');
    expect(policy.inspect('https://github.com/login').flags).toEqual([]);
    expect(policy.inspect('https://example.com/docs?next=https://x.example').flags).toEqual([]);
  });

  it('with a resolver, refuses names that resolve to private, loopback, link-local, CGNAT or reserved addresses', async () => {
    const resolving = (addresses: string[]) => new UrlPolicy({ shortDomains: [], resolver: { addresses: async () => addresses } });
    await expect(resolving(['93.184.216.34']).check('https://example.com/')).resolves.toMatchObject({ host: 'example.com' });
    for (const inner of ['10.0.0.1', '127.0.0.1', '169.254.169.254', '100.64.1.1', '::1', 'fd00::1', '224.0.0.1']) {
      await expect(resolving(['93.184.216.34', inner]).check('https://example.com/')).rejects.toMatchObject({ details: { reason: 'private-address' } });
    }
    await expect(
      new UrlPolicy({ shortDomains: [], resolver: { addresses: async () => Promise.reject(new Error('ENOTFOUND')) } }).check('https://nx.example/'),
    ).rejects.toMatchObject({ details: { reason: 'unresolvable' } });
  });

  it('resolves a host once for the targets of one request that share the lookups, and names each refused field', async () => {
    const asked: string[] = [];
    const inner = new UrlPolicy({ shortDomains: [], resolver: { addresses: async (host) => (asked.push(host), ['192.168.1.10']) } });
    const lookups = new Map<string, Promise<string[]>>();
    for (const field of ['url', 'variants.0.url', 'geoTargets.DE']) {
      await expect(inner.check(`https://intranet-app.example/${field}`, field, lookups)).rejects.toMatchObject({
        details: { reason: 'private-address' },
        message: expect.stringContaining(field),
      });
    }
    expect(asked).toEqual(['intranet-app.example']);
    await inner.check('https://intranet-app.example/again').catch(() => undefined); // a new request asks again
    expect(asked).toHaveLength(2);
  });

  it('refuses or passes a target parsed beforehand (parseTarget, as a batch worker thread does) exactly as inspect does, the changing lists in their place', () => {
    const served = policy.alsoServing({ isServed: (h) => h === 'tenant.example' || h === 'bit.ly' || h === 'evil.example' });
    const { shortDomains, shorteners } = served.fixedLists();
    const outcome = (f: () => unknown) => {
      try {
        return { ok: f() };
      } catch (e) {
        const error = e as { code: string; message: string; details: unknown };
        return { code: error.code, message: error.message, details: error.details };
      }
    };
    const urls: unknown[] = [
      'https://example.com/a b?q=1',
      'https://bücher.example/x',
      'https://tenant.example/x',
      'https://tenant.example../x',
      'https://bit.ly/x',
      'https://bit.ly../x',
      'https://sub.bit.ly/x',
      'https://evil.example/x',
      'https://a.evil.example../x',
      'https://ok.example../x',
      'https://ok.example./x',
      'https://sho.rt/x',
      'https://x.sho.rt/x',
      'https://example.com/' + 'a'.repeat(2100),
      'https://evil.example/' + 'a'.repeat(2100),
      'http://127.0.0.1/',
      'ftp://example.com/',
      'https://user:pw@example.com/',
      'https://exa\tmple.com/',
      'https://localhost/',
      'https://аpple.com/login',
      'http://paypal.secure-login.example.com/verify',
      'not a url',
      '',
      42,
    ];
    for (const url of urls) {
      expect([url, outcome(() => served.inspected(parseTarget(url, 'url', shortDomains, shorteners), 'url'))]).toEqual([
        url,
        outcome(() => served.inspect(url)),
      ]);
    }
    // The parsed form crosses a thread: plain data only.
    expect(structuredClone(parseTarget('https://аpple.com/login', 'url', shortDomains, shorteners))).toEqual(
      parseTarget('https://аpple.com/login', 'url', shortDomains, shorteners),
    );
  });
});
