import { checkedAddressesOf, embeddedIpv4, isPublicAddress } from './addresses';

describe('isPublicAddress', () => {
  it('knows public from non-public addresses', () => {
    for (const pub of ['8.8.8.8', '1.1.1.1', '2a00:1450:4001::1', '2606:4700:4700::1111']) expect([pub, isPublicAddress(pub)]).toEqual([pub, true]);
    for (const inner of [
      '127.0.0.1',
      '10.0.0.1',
      '169.254.169.254',
      '192.168.0.1',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fe80::1%eth0',
      'fc00::1',
      'fd12:3456::1',
      'fec0::1',
      'ff02::1',
      '2001:db8::1',
      '3fff::1',
      'not an address',
      '',
    ])
      expect([inner, isPublicAddress(inner)]).toEqual([inner, false]);
  });

  it('judges an IPv6 address that carries an IPv4 address as that IPv4 address, in every spelling', () => {
    const loopback = [
      '::7f00:1', // IPv4-compatible
      '::127.0.0.1',
      '::ffff:127.0.0.1', // IPv4-mapped
      '::ffff:7f00:1',
      '0:0:0:0:0:ffff:7f00:0001',
      '::ffff:0:7f00:1', // SIIT (IPv4-translated)
      '::ffff:0:127.0.0.1',
      '64:ff9b::7f00:1', // NAT64, well-known prefix
      '64:ff9b::127.0.0.1',
      '2002:7f00:1::1', // 6to4 of 127.0.0.1
      '2002:7f00:0001:0:0:0:0:1',
    ];
    const internal = ['::a00:1', '::ffff:10.0.0.1', '::ffff:0:a9fe:a9fe', '64:ff9b::a9fe:a9fe', '64:ff9b::192.168.1.1', '2002:c0a8:101::1', '2002:a00:1::'];
    for (const address of [...loopback, ...internal]) expect([address, isPublicAddress(address)]).toEqual([address, false]);
    // NAT64 for local use (64:ff9b:1::/48) and Teredo (2001::/32) are refused whatever they carry.
    for (const address of ['64:ff9b:1::808:808', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:0:808:808::f7f7:f7f7'])
      expect([address, isPublicAddress(address)]).toEqual([address, false]);
    // A public IPv4 address stays public in the translations that reach it.
    for (const address of ['::ffff:8.8.8.8', '::ffff:0:808:808', '64:ff9b::8.8.8.8', '2002:808:808::1'])
      expect([address, isPublicAddress(address)]).toEqual([address, true]);
  });

  it('finds the IPv4 address inside each embedding', () => {
    expect(embeddedIpv4('::7f00:1')).toEqual(['127.0.0.1']);
    expect(embeddedIpv4('::ffff:0:7f00:1')).toEqual(['127.0.0.1']);
    expect(embeddedIpv4('::ffff:192.168.0.1')).toEqual(['192.168.0.1']);
    expect(embeddedIpv4('64:ff9b::a00:1')).toEqual(['10.0.0.1']);
    expect(embeddedIpv4('2002:a9fe:a9fe::')).toEqual(['169.254.169.254']);
    // Teredo: the server, and the client inverted (RFC 4380's example: server 65.54.227.120, client 192.0.2.45).
    expect(embeddedIpv4('2001:0:4136:e378:8000:63bf:3fff:fdd2')).toEqual(['65.54.227.120', '192.0.2.45']);
    expect(embeddedIpv4('2a00:1450:4001::1')).toEqual([]);
    expect(embeddedIpv4('127.0.0.1')).toEqual([]);
  });
});

describe('checkedAddressesOf', () => {
  const options = { allowPrivate: false, field: 'issuer', privateHint: 'a test allows it' };
  const resolving = (answer: string[] | Error) => ({
    addresses: async () => {
      if (answer instanceof Error) throw answer;
      return answer;
    },
  });

  it('answers a literal address as itself and a name as what it resolves to, each public', async () => {
    expect(await checkedAddressesOf(new URL('https://[2a00:1450:4001::1]/'), resolving(new Error('not asked')), options)).toEqual(['2a00:1450:4001::1']);
    expect(await checkedAddressesOf(new URL('https://idp.example.com/'), resolving(['8.8.8.8', '2a00:1450:4001::1']), options)).toEqual([
      '8.8.8.8',
      '2a00:1450:4001::1',
    ]);
  });

  it('refuses a name that resolves to nothing, or to any non-public address (one is enough), and a private literal', async () => {
    const reasonOf = (p: Promise<unknown>) =>
      p.then(
        () => 'passed',
        (e: { code: string; details: { reason: string; field: string } }) => `${e.code} ${e.details.reason} ${e.details.field}`,
      );
    expect(await reasonOf(checkedAddressesOf(new URL('https://nowhere.example/'), resolving([]), options))).toBe('URL_NOT_ALLOWED unresolvable issuer');
    expect(await reasonOf(checkedAddressesOf(new URL('https://nowhere.example/'), resolving(new Error('ENOTFOUND')), options))).toBe(
      'URL_NOT_ALLOWED unresolvable issuer',
    );
    expect(await reasonOf(checkedAddressesOf(new URL('https://rebind.example/'), resolving(['8.8.8.8', '::ffff:0:7f00:1']), options))).toBe(
      'URL_NOT_ALLOWED private-address issuer',
    );
    expect(await reasonOf(checkedAddressesOf(new URL('https://[::7f00:1]/'), resolving([]), options))).toBe('URL_NOT_ALLOWED private-address issuer');
    expect(await checkedAddressesOf(new URL('http://127.0.0.1:8080/'), resolving([]), { ...options, allowPrivate: true })).toEqual(['127.0.0.1']);
  });
});
