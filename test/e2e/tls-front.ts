import { execFileSync } from 'child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { connect, Socket } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';
import { createServer, Server } from 'tls';

/**
 * A TLS front for a plain-HTTP app, as a load balancer terminates TLS in production: a certificate
 * authority made here with openssl (its key never leaves the temp directory, which is removed), a
 * server certificate for the front's address signed by it, and a TLS server piping each connection
 * to the app. Clients trust `ca` (nothing is installed on the machine). It listens on port 443 of a
 * loopback address of its own (127.x.y.z, all on `lo`), since some clients (the `bitly` npm client)
 * take a host name and no port: that needs root (as CI runs) or `net.ipv4.ip_unprivileged_port_start=443`.
 */
export class TlsFront {
  private constructor(
    private readonly server: Server,
    private readonly sockets: Set<Socket>,
    readonly ca: string,
    readonly host: string,
  ) {}

  static async start(target: { host: string; port: number }): Promise<TlsFront> {
    for (let attempt = 0; ; attempt++) {
      const host = `127.${1 + Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;
      try {
        return await TlsFront.startOn(host, target);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt > 5) throw error;
      }
    }
  }

  private static async startOn(host: string, target: { host: string; port: number }): Promise<TlsFront> {
    const dir = mkdtempSync(join(tmpdir(), 'shortlink-tls-'));
    try {
      const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
      ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=shortlink e2e test CA');
      ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${host}`);
      writeFileSync(
        join(dir, 'san.ext'),
        `subjectAltName=IP:${host}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n`,
      );
      ssl(
        'x509',
        '-req',
        '-in',
        'server.csr',
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        'server.pem',
        '-days',
        '1',
        '-extfile',
        'san.ext',
      );
      const ca = readFileSync(join(dir, 'ca.pem'), 'utf8');
      const sockets = new Set<Socket>();
      const server = createServer({ key: readFileSync(join(dir, 'server.key')), cert: readFileSync(join(dir, 'server.pem')) }, (tls) => {
        const plain = connect(target.port, target.host);
        for (const s of [tls, plain]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => (s === tls ? plain : tls).destroy());
        }
        tls.pipe(plain).pipe(tls);
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(443, host, resolve);
      });
      return new TlsFront(server, sockets, ca, host);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
