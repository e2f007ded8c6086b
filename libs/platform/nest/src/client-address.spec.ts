import { ClientAddressResolver, normalizeAddress } from './client-address';

const cidr = (address: string, prefix: number, family: 'ipv4' | 'ipv6' = 'ipv4') => ({ address, prefix, family });

describe('ClientAddressResolver', () => {
  it('believes nobody by default: the socket address is the client, whatever the header says', () => {
    const r = new ClientAddressResolver([]);
    expect(r.resolve('203.0.113.9', '1.2.3.4')).toBe('203.0.113.9');
    expect(r.resolve('::ffff:203.0.113.9', undefined)).toBe('203.0.113.9');
  });

  it('ignores the header of an untrusted peer even when proxies are configured', () => {
    const r = new ClientAddressResolver([cidr('10.0.0.0', 8)]);
    expect(r.resolve('203.0.113.9', '1.2.3.4')).toBe('203.0.113.9');
  });

  it('takes the right-most hop that is not a trusted proxy', () => {
    const r = new ClientAddressResolver([cidr('10.0.0.0', 8), cidr('127.0.0.1', 32)]);
    // client, spoofed left part, then two trusted proxies
    expect(r.resolve('127.0.0.1', '6.6.6.6, 198.51.100.7, 10.1.2.3')).toBe('198.51.100.7');
    expect(r.resolve('127.0.0.1', ['6.6.6.6', '198.51.100.7'])).toBe('198.51.100.7');
    expect(r.resolve('::ffff:127.0.0.1', '198.51.100.7')).toBe('198.51.100.7');
  });

  it('refuses values that are not IP addresses and falls back to the last trusted hop', () => {
    const r = new ClientAddressResolver([cidr('127.0.0.1', 32), cidr('10.0.0.0', 8)]);
    expect(r.resolve('127.0.0.1', 'x'.repeat(5000))).toBe('127.0.0.1');
    expect(r.resolve('127.0.0.1', '198.51.100.7, not-an-ip, 10.0.0.5')).toBe('10.0.0.5');
    expect(r.resolve('127.0.0.1', '198.51.100.7:443')).toBe('127.0.0.1');
    expect(r.resolve('127.0.0.1', '')).toBe('127.0.0.1');
  });

  it('reads IPv6 blocks and stops after a bounded number of hops', () => {
    const r = new ClientAddressResolver([cidr('::1', 128, 'ipv6'), cidr('10.0.0.0', 8)]);
    expect(r.resolve('::1', '2001:DB8::1')).toBe('2001:db8::1');
    const longChain = Array.from({ length: 100 }, (_, i) => `10.0.0.${i % 250}`).join(',');
    expect(r.resolve('::1', `198.51.100.7,${longChain}`)).toMatch(/^10\.0\.0\./);
  });

  it('answers the same when the hops come again (they are remembered as written), also past its bound', () => {
    const r = new ClientAddressResolver([cidr('127.0.0.1', 32), cidr('10.0.0.0', 8)]);
    const cases: Array<[string, string]> = [
      ['198.51.100.7, 10.0.0.5', '198.51.100.7'],
      [' 2001:DB8::1 , 10.0.0.5', '2001:db8::1'],
      ['::ffff:198.51.100.8', '198.51.100.8'],
      ['198.51.100.7, not-an-ip, 10.0.0.5', '10.0.0.5'],
      [`${'1'.repeat(100)}, 10.0.0.6`, '10.0.0.6'],
    ];
    for (let round = 0; round < 3; round++) for (const [header, client] of cases) expect(r.resolve('127.0.0.1', header)).toBe(client);
    for (let i = 0; i < 12_000; i++) expect(r.resolve('127.0.0.1', `198.51.${i >> 8}.${i & 255}`)).toBe(`198.51.${i >> 8}.${i & 255}`);
    for (const [header, client] of cases) expect(r.resolve('127.0.0.1', header)).toBe(client);
  });

  it('normalizes IPv4-mapped IPv6 addresses', () => {
    expect(normalizeAddress('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(normalizeAddress('::FFFF:abcd')).toBe('::ffff:abcd');
  });
});
