import { execFileSync } from 'child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { Agent, request } from 'https';
import { createServer } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';
import { commandPath, eventually, freePort, Proc, REPO_ROOT, startCommand } from '@shortlink/harness';
import { onHost } from './domains-journey';

/**
 * What the TLS journey runs besides the apps, as a self-hoster runs it (docs/operations.md, "Custom
 * domains and TLS"): Debian's `pebble` (a real ACME server) with its challenge test server as the
 * DNS of the test's names, and Debian's `caddy` with the repository's deploy/caddy/sites.caddy,
 * asking the redirect before each certificate. Nothing leaves the machine: every name resolves, for
 * Pebble, the verifier and Chromium alike, to the loopback address Caddy listens on (ports 80 and
 * 443 of an address of its own, 127.x.y.z, which needs root as CI runs). The tools come from
 * tools/ci/install-tls-tools.sh.
 */
export const TLS_TOOLS = ['caddy', 'pebble', 'pebble-challtestsrv', 'certutil', 'openssl'] as const;

/** The tools missing on this machine (the journey cannot run without them). */
export const missingTlsTools = () => TLS_TOOLS.filter((t) => commandPath(t) === null);

const bindable = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });

/** A loopback address whose ports 80 and 443 are free: where Caddy listens, or where nothing does. */
export async function freeLoopbackAddress(): Promise<string> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const host = `127.${1 + Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;
    if ((await bindable(host, 80)) && (await bindable(host, 443))) return host;
  }
  throw new Error('no loopback address with ports 80 and 443 free (the TLS journey needs root)');
}

/** The ACME side: pebble-challtestsrv (DNS) and pebble, in a scratch directory. */
export class AcmeServers {
  private readonly procs: Proc[] = [];
  private constructor(
    readonly dir: string,
    /** The loopback address every name resolves to (Caddy listens there). */
    readonly frontHost: string,
    /** The challenge test server's DNS, as `127.0.0.1:port` (Pebble's and the verifier's resolver). */
    readonly dns: string,
    private readonly dnsAdmin: string,
    /** Pebble's ACME directory. */
    readonly directory: string,
    /** The CA of Pebble's own HTTPS listener (Caddy's acme_ca_root). */
    readonly pebbleHttpsCa: string,
    /** The root Pebble issues under: what browsers and the probes are told to trust. */
    readonly rootFile: string,
  ) {}

  static async start(): Promise<AcmeServers> {
    const missing = missingTlsTools();
    if (missing.length) throw new Error(`the TLS journey needs ${missing.join(', ')}: bash tools/ci/install-tls-tools.sh`);
    const dir = mkdtempSync(join(tmpdir(), 'shortlink-acme-'));
    const frontHost = await freeLoopbackAddress();
    const [dnsPort, dnsAdminPort, acmePort, pebbleAdminPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    // Pebble's own HTTPS listener: a certificate for 127.0.0.1 under a CA made here.
    const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'https-ca.key', '-out', 'https-ca.pem', '-days', '2', '-subj', '/CN=pebble listener CA');
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'pebble.key', '-out', 'pebble.csr', '-subj', '/CN=127.0.0.1');
    writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
    ssl(
      'x509',
      '-req',
      '-in',
      'pebble.csr',
      '-CA',
      'https-ca.pem',
      '-CAkey',
      'https-ca.key',
      '-CAcreateserial',
      '-out',
      'pebble.pem',
      '-days',
      '2',
      '-extfile',
      'san.ext',
    );
    writeFileSync(
      join(dir, 'pebble.json'),
      JSON.stringify({
        pebble: {
          listenAddress: `127.0.0.1:${acmePort}`,
          managementListenAddress: `127.0.0.1:${pebbleAdminPort}`,
          certificate: join(dir, 'pebble.pem'),
          privateKey: join(dir, 'pebble.key'),
          // Validations go to the ports Caddy listens on.
          httpPort: 80,
          tlsPort: 443,
          ocspResponderURL: '',
          externalAccountBindingRequired: false,
        },
      }),
    );
    const servers = new AcmeServers(
      dir,
      frontHost,
      `127.0.0.1:${dnsPort}`,
      `http://127.0.0.1:${dnsAdminPort}`,
      `https://127.0.0.1:${acmePort}/dir`,
      join(dir, 'https-ca.pem'),
      join(dir, 'pebble-root.pem'),
    );
    try {
      servers.procs.push(
        startCommand(
          'pebble-challtestsrv',
          [
            '-defaultIPv4',
            frontHost,
            '-defaultIPv6',
            '',
            '-dns01',
            servers.dns,
            '-http01',
            '',
            '-https01',
            '',
            '-tlsalpn01',
            '',
            '-management',
            `127.0.0.1:${dnsAdminPort}`,
          ],
          { name: 'pebble-challtestsrv', cwd: dir },
        ),
      );
      servers.procs.push(
        startCommand('pebble', ['-config', join(dir, 'pebble.json'), '-dnsserver', servers.dns], {
          name: 'pebble',
          cwd: dir,
          // No random waits before validating, no nonces refused at random: the test's time is Caddy's.
          env: { PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' },
        }),
      );
      const ca = readFileSync(servers.pebbleHttpsCa, 'utf8');
      const root = await eventually(
        'pebble serves its root',
        () => httpsText(`https://127.0.0.1:${pebbleAdminPort}/roots/0`, ca).then((t) => t.includes('BEGIN CERTIFICATE') && t),
        20_000,
        200,
      );
      writeFileSync(servers.rootFile, root);
      await eventually(
        'challtestsrv answers',
        async () => (await fetch(`${servers.dnsAdmin}/set-txt`, { method: 'POST', body: '{"host":"ready.test.","value":"1"}' })).ok,
      );
      return servers;
    } catch (error) {
      await servers.stop();
      throw new Error(`${(error as Error).message}\n${servers.output()}`);
    }
  }

  /** `host`'s A record in the challenge test server's DNS, replacing any earlier one (names without one resolve to frontHost). */
  async setA(host: string, address: string): Promise<void> {
    // add-a appends to the host's addresses: clear them first.
    for (const [path, body] of [
      ['clear-a', { host: `${host}.` }],
      ['add-a', { host: `${host}.`, addresses: [address] }],
    ] as const) {
      const res = await fetch(`${this.dnsAdmin}/${path}`, { method: 'POST', body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${path} answered ${res.status}`);
    }
  }

  /** A TXT record in the challenge test server's DNS. */
  async setTxt(name: string, value: string): Promise<void> {
    const res = await fetch(`${this.dnsAdmin}/set-txt`, { method: 'POST', body: JSON.stringify({ host: `${name}.`, value }) });
    if (!res.ok) throw new Error(`set-txt answered ${res.status}`);
  }

  output(): string {
    return this.procs.map((p) => `--- ${p.name}\n${p.output().slice(-4000)}`).join('\n');
  }

  async stop(): Promise<void> {
    await Promise.all(this.procs.map((p) => p.stop()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Caddy with the repository's sites, asking `askUrl`, in front of `upstream`, getting certificates from `acme`. */
export class CaddyFront {
  private constructor(
    private readonly proc: Proc,
    private readonly storage: string,
  ) {}

  static async start(acme: AcmeServers, o: { askUrl: string; upstream: string; serviceDomain: string }): Promise<CaddyFront> {
    const storage = join(acme.dir, 'caddy-data');
    const caddyfile = join(acme.dir, 'Caddyfile');
    // The test's global options (where to listen, which CA, where to keep certificates), then the sites as shipped.
    writeFileSync(
      caddyfile,
      [
        '{',
        '\tadmin off',
        `\tdefault_bind ${acme.frontHost}`,
        '\thttp_port 80',
        '\thttps_port 443',
        `\tacme_ca ${acme.directory}`,
        `\tacme_ca_root ${acme.pebbleHttpsCa}`,
        `\tstorage file_system {\n\t\troot ${storage}\n\t}`,
        `\ton_demand_tls {\n\t\task ${o.askUrl}\n\t}`,
        '}',
        `import ${join(REPO_ROOT, 'deploy/caddy/sites.caddy')}`,
        '',
      ].join('\n'),
    );
    const proc = startCommand('caddy', ['run', '--config', caddyfile, '--adapter', 'caddyfile'], {
      name: 'caddy',
      cwd: acme.dir,
      env: {
        SHORTLINK_DOMAIN: o.serviceDomain,
        SHORTLINK_REDIRECT_UPSTREAM: o.upstream,
        HOME: acme.dir,
        XDG_DATA_HOME: join(acme.dir, 'xdg'),
        XDG_CONFIG_HOME: join(acme.dir, 'xdg'),
      },
    });
    const front = new CaddyFront(proc, storage);
    try {
      await eventually('caddy listens', async () => (await onHost(`http://${acme.frontHost}`, '/', 'anything.test')).status === 308, 20_000, 200);
    } catch (error) {
      await proc.stop();
      throw new Error(`${(error as Error).message}\n${proc.output().slice(-4000)}`);
    }
    return front;
  }

  /** Whether Caddy holds a certificate for `host` in its storage (obtained from the CA). */
  hasCertificateFor(host: string): boolean {
    const root = join(this.storage, 'certificates');
    if (!existsSync(root)) return false;
    return readdirSync(root).some((issuer) => existsSync(join(root, issuer, host, `${host}.crt`)));
  }

  output(): string {
    return this.proc.output();
  }

  stop(): Promise<void> {
    return this.proc.stop();
  }
}

/** An NSS database trusting `rootFile`, under a home of its own: what Chromium on Linux reads its trust from. */
export function browserHomeTrusting(rootFile: string, dir: string): string {
  const home = join(dir, 'browser-home');
  const db = `sql:${join(home, '.pki', 'nssdb')}`;
  execFileSync('mkdir', ['-p', join(home, '.pki', 'nssdb')]);
  execFileSync('certutil', ['-d', db, '-N', '--empty-password']);
  execFileSync('certutil', ['-d', db, '-A', '-t', 'C,,', '-n', 'pebble-root', '-i', rootFile]);
  return home;
}

/** GET over https trusting only `ca`; the body as text. */
export function httpsText(url: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request(url, { agent: new Agent({ ca }) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve(body));
    })
      .on('error', reject)
      .end();
  });
}

/** One request to `host` over HTTPS at `address` (SNI and Host: `host`), trusting only `ca`: status and headers, or the TLS error. */
export function httpsAt(
  address: string,
  host: string,
  path: string,
  ca: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined> } | { error: string }> {
  return new Promise((resolve) => {
    request({ host: address, servername: host, port: 443, path, headers: { host }, ca, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
    })
      .on('error', (e) => resolve({ error: (e as NodeJS.ErrnoException).code ?? e.message }))
      .end();
  });
}
