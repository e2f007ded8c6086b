import { execFileSync } from 'child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { createServer, Server } from 'http';
import { AddressInfo } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';
import { createServer as createTlsServer, Server as TlsServer } from 'tls';
import { DnsResponder } from '@shortlink/testing';
import { checkOwnership, ProbeFailure, txtRecordName, txtRecordValue } from '@shortlink/tenants-domain';
import { NetworkDomainProbes, NetworkDomainProbesOptions } from './network-domain-probes';

const listen = async <S extends Server | TlsServer>(server: S): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

describe('NetworkDomainProbes', () => {
  let dns: DnsResponder;
  let web: Server;
  let webPort: number;
  const token = 'tok_0123456789abcdefghijklmnopqrstu';
  const probes = (over: Partial<NetworkDomainProbesOptions> = {}) =>
    new NetworkDomainProbes({ resolvers: [dns.address], timeoutMs: 1000, httpPort: webPort, allowPrivate: true, tlsFront: null, ...over });

  beforeAll(async () => {
    dns = await DnsResponder.start();
    web = createServer((req, res) => {
      if (req.headers.host === 'go.acme.test' && req.url === `/.well-known/shortlink-challenge/${token}`) return void res.end(token);
      if (req.url === '/moved') return void res.writeHead(301, { location: 'https://elsewhere.test/' }).end();
      res.writeHead(404).end('no');
    });
    webPort = await listen(web);
  });
  afterAll(async () => {
    await dns.close();
    await new Promise((r) => web.close(r));
  });

  it('reads TXT records through the configured name server: parts joined, none for a name without any, no answer is not conclusive', async () => {
    dns.setTxt('_shortlink-challenge.go.acme.test', [txtRecordValue(token), 'v=spf1 -all', 'x'.repeat(300)]);
    expect(await probes().txt('_shortlink-challenge.go.acme.test')).toEqual([txtRecordValue(token), 'v=spf1 -all', 'x'.repeat(300)]);
    expect(await probes().txt('_shortlink-challenge.nowhere.test')).toEqual([]); // NXDOMAIN
    dns.setAddress('only-address.test', '127.0.0.1');
    expect(await probes().txt('only-address.test')).toEqual([]); // NODATA
    dns.failing = true;
    try {
      const failure = await probes()
        .txt('_shortlink-challenge.go.acme.test')
        .catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(ProbeFailure);
      expect(failure).toMatchObject({ conclusive: false });
    } finally {
      dns.failing = false;
    }
    expect(dns.asked).toContain('TXT _shortlink-challenge.go.acme.test');
  });

  it('fetches the token over HTTP from the address the name server gives, with the domain as Host, following no redirect', async () => {
    dns.setAddress('go.acme.test', '127.0.0.1');
    expect(await probes().fetch('go.acme.test', `/.well-known/shortlink-challenge/${token}`)).toEqual({ status: 200, body: token });
    expect(await probes().fetch('go.acme.test', '/moved')).toEqual({ status: 301, body: '' });
    expect(dns.asked).toEqual(expect.arrayContaining(['A go.acme.test', 'AAAA go.acme.test']));
  });

  it('refuses private addresses unless allowed, a name without address, and tells a refused connection from a no', async () => {
    dns.setAddress('go.acme.test', '127.0.0.1');
    const refused = await probes({ allowPrivate: false })
      .fetch('go.acme.test', '/x')
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ conclusive: true, message: expect.stringContaining('127.0.0.1') });
    expect(
      await probes()
        .fetch('no-address.test', '/x')
        .catch((e: unknown) => e),
    ).toMatchObject({ conclusive: true, message: 'no-address.test has no address' });
    // Nothing listens on the port: the check could not tell.
    const closed = createServer();
    const port = await listen(closed);
    await new Promise((r) => closed.close(r));
    expect(
      await probes({ httpPort: port })
        .fetch('go.acme.test', '/x')
        .catch((e: unknown) => e),
    ).toMatchObject({ conclusive: false });
  });

  it('proves a domain by either method; a failure is conclusive only when every method answered no', async () => {
    dns.setAddress('go.acme.test', '127.0.0.1');
    dns.setTxt(txtRecordName('go.acme.test'), []);
    expect(await checkOwnership(probes(), 'go.acme.test', token, ['dns', 'http'])).toEqual({ passed: true, method: 'http' });
    expect(await checkOwnership(probes(), 'go.acme.test', token, ['dns'])).toMatchObject({ passed: false, conclusive: true });
    dns.setTxt(txtRecordName('go.acme.test'), [txtRecordValue(token)]);
    expect(await checkOwnership(probes(), 'go.acme.test', token, ['dns'])).toEqual({ passed: true, method: 'dns' });
    dns.setTxt(txtRecordName('go.acme.test'), [txtRecordValue('another-token')]);
    dns.setAddress('go.acme.test', '127.0.0.2'); // nothing answers there: no connection
    expect(await checkOwnership(probes(), 'go.acme.test', token, ['dns', 'http'])).toMatchObject({ passed: false, conclusive: false });
    dns.setAddress('go.acme.test', '127.0.0.1');
    expect(await checkOwnership(probes(), 'go.acme.test', 'not-the-token', ['dns', 'http'])).toMatchObject({ passed: false, conclusive: true });
  });

  it('reads the certificate the TLS front serves for a domain, checked for its name against the given CA', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shortlink-probe-tls-'));
    try {
      const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
      // P-256 keys: made at once, where two RSA keys took seconds under a CPU hog.
      const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];
      ssl('req', '-x509', ...ec, '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=probe test CA');
      ssl('req', ...ec, '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=go.acme.test');
      writeFileSync(join(dir, 'san.ext'), 'subjectAltName=DNS:go.acme.test\nextendedKeyUsage=serverAuth\n');
      ssl('x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'leaf.pem', '-days', '30', '-extfile', 'san.ext');
      const front = createTlsServer({ key: readFileSync(join(dir, 'leaf.key')), cert: readFileSync(join(dir, 'leaf.pem')) }, (s) => s.end());
      const port = await listen(front);
      try {
        const tlsFront = { host: '127.0.0.1', port, caFile: join(dir, 'ca.pem'), timeoutMs: 5000 };
        const served = await probes({ tlsFront }).certificate('go.acme.test');
        const days = (served!.expiresAt.getTime() - Date.now()) / 86_400_000;
        expect(days).toBeGreaterThan(29);
        expect(days).toBeLessThan(31);
        expect(served!.fingerprint).toMatch(/^[0-9a-f]{64}$/);
        // Not for another name, nor without the CA.
        await expect(probes({ tlsFront }).certificate('other.acme.test')).rejects.toThrow(/no valid certificate for other.acme.test/);
        await expect(probes({ tlsFront: { ...tlsFront, caFile: null } }).certificate('go.acme.test')).rejects.toThrow(/no valid certificate/);
        expect(await probes().certificate('go.acme.test')).toBeNull();
      } finally {
        await new Promise((r) => front.close(r));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // openssl three times and four TLS handshakes: the bound stops a hang only.
  }, 30_000);
});
