import { normalizeHost } from './host';

describe('normalizeHost', () => {
  it('lower-cases, drops one trailing dot and the default ports, in any combination', () => {
    for (const host of ['go.acme.test', 'GO.Acme.TEST', 'go.acme.test.', 'go.acme.test:80', 'go.acme.test:443', 'Go.Acme.Test.:443']) {
      expect({ host, normalized: normalizeHost(host) }).toEqual({ host, normalized: 'go.acme.test' });
    }
  });

  it('keeps a non-default port, and brackets of an IPv6 literal', () => {
    expect(normalizeHost('localhost:8080')).toBe('localhost:8080');
    expect(normalizeHost('Go.Acme.Test.:8443')).toBe('go.acme.test:8443');
    expect(normalizeHost('[::1]:443')).toBe('[::1]');
    expect(normalizeHost('[::1]:8080')).toBe('[::1]:8080');
    expect(normalizeHost('10.1.2.3:80')).toBe('10.1.2.3');
  });

  it('leaves what is not a host and port lower-cased only, so that it matches no domain', () => {
    expect(normalizeHost('go.acme.test..')).toBe('go.acme.test..');
    expect(normalizeHost('a:b:c')).toBe('a:b:c');
    expect(normalizeHost('go.acme.test:')).toBe('go.acme.test:');
    expect(normalizeHost('')).toBe('');
  });
});
