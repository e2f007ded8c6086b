import { isPublicAddress, UrlPolicy } from './url-policy';

describe('UrlPolicy', () => {
  const policy = new UrlPolicy({ shortDomains: ['sho.rt', 'go.example:8080'], blockList: { blocking: (h) => (h === 'evil.example' || h.endsWith('.evil.example') ? 'evil.example' : null) } });
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
      'http://127.0.0.1/', 'http://2130706433/', 'http://0x7f000001/', 'http://0177.0.0.1/', 'http://127.1/', 'http://0x7f.1/', 'http://[::1]/',
      'http://[::ffff:127.0.0.1]/', 'http://[2001:db8::1]/', 'http://8.8.8.8/', 'http://%31%32%37.0.0.1/',
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
    await expect(new UrlPolicy({ shortDomains: [], resolver: { addresses: async () => Promise.reject(new Error('ENOTFOUND')) } }).check('https://nx.example/')).rejects.toMatchObject({ details: { reason: 'unresolvable' } });
  });

  it('knows public from non-public addresses', () => {
    expect(isPublicAddress('8.8.8.8')).toBe(true);
    expect(isPublicAddress('2a00:1450:4001::1')).toBe(true);
    expect(isPublicAddress('192.168.0.1')).toBe(false);
    expect(isPublicAddress('::ffff:10.0.0.1')).toBe(false);
  });
});
