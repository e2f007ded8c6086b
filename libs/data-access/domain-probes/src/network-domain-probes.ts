import { lookup, Resolver } from 'dns/promises';
import { readFileSync } from 'fs';
import { request } from 'http';
import { isIP } from 'net';
import { connect, rootCertificates } from 'tls';
import { isPublicAddress } from '@shortlink/url-policy';
import { DomainProbes, ProbeFailure, ServedCertificate } from '@shortlink/tenants-domain';

export interface NetworkDomainProbesOptions {
  /** Name servers (`host` or `host:port`); empty: the system's resolver. */
  readonly resolvers: readonly string[];
  /** One DNS question, or one HTTP check, at most this long. */
  readonly timeoutMs: number;
  /** The port the HTTP check connects to (80). */
  readonly httpPort: number;
  /** Private, loopback and link-local addresses may be connected to (tests, a private network). */
  readonly allowPrivate: boolean;
  /** The TLS front whose certificates are read; null: none. */
  readonly tlsFront: { readonly host: string; readonly port: number; readonly caFile: string | null; readonly timeoutMs: number } | null;
}

/** The most of the HTTP check's answer read: the token is 32 characters. */
const MAX_BODY_BYTES = 1024;
/** DNS answers that say the name has no such record (NXDOMAIN, NODATA): a conclusive no. */
const ABSENT = new Set(['ENOTFOUND', 'ENODATA']);

/**
 * The ownership checks' network side (docs/design.md, "Custom domains and TLS"): TXT records through
 * the system resolver or the configured name servers; the HTTP check to an address of the domain
 * that may be connected to (public ones only unless allowed), pinned for the request, with the
 * domain as Host, no redirect followed; the certificate the TLS front serves for a domain, checked
 * against the system's CAs (and a configured CA file) for that name.
 */
export class NetworkDomainProbes implements DomainProbes {
  private readonly ca: string[] | undefined;

  constructor(private readonly options: NetworkDomainProbesOptions) {
    const caFile = options.tlsFront?.caFile;
    this.ca = caFile ? [...rootCertificates, readFileSync(caFile, 'utf8')] : undefined;
  }

  async txt(name: string): Promise<string[]> {
    try {
      const records = await this.bounded(this.resolver().resolveTxt(name), `asking TXT ${name}`);
      return records.map((parts) => parts.join(''));
    } catch (error) {
      if (ABSENT.has((error as NodeJS.ErrnoException).code ?? '')) return [];
      throw new ProbeFailure(`DNS could not answer TXT ${name}: ${codeOf(error)}`, false);
    }
  }

  async fetch(domain: string, path: string): Promise<{ status: number; body: string }> {
    const addresses = await this.addressesOf(domain);
    if (addresses.length === 0) throw new ProbeFailure(`${domain} has no address`, true);
    const allowed = this.options.allowPrivate ? addresses : addresses.filter(isPublicAddress);
    if (allowed.length === 0) throw new ProbeFailure(`${domain} resolves only to addresses the check may not connect to (${addresses.join(', ')})`, true);
    const address = allowed[0];
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: address,
          family: isIP(address),
          port: this.options.httpPort,
          path,
          method: 'GET',
          headers: { host: domain, 'user-agent': 'shortlink-domain-check/1', accept: 'text/plain' },
          timeout: this.options.timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read <= MAX_BODY_BYTES) chunks.push(chunk);
            else res.destroy();
          });
          res.on('close', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8').slice(0, MAX_BODY_BYTES) }));
        },
      );
      req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer within ${this.options.timeoutMs} ms`), { code: 'ETIMEDOUT' })));
      // No connection, no answer: the check could not tell (the front may be restarting).
      req.on('error', (error) => reject(new ProbeFailure(`http://${domain}${path} (${address}): ${codeOf(error)}`, false)));
      req.end();
    });
  }

  async certificate(domain: string): Promise<ServedCertificate | null> {
    const front = this.options.tlsFront;
    if (!front) return null;
    return new Promise((resolve, reject) => {
      const socket = connect(
        { host: front.host, port: front.port, servername: domain, ca: this.ca, rejectUnauthorized: true, timeout: front.timeoutMs },
        () => {
          const served = socket.getPeerCertificate();
          socket.end();
          resolve({ expiresAt: new Date(served.valid_to), fingerprint: served.fingerprint256.replace(/:/g, '').toLowerCase() });
        },
      );
      socket.on('timeout', () => socket.destroy(new Error(`no certificate within ${front.timeoutMs} ms`)));
      socket.on('error', (error) => reject(new Error(`no valid certificate for ${domain} from ${front.host}:${front.port}: ${codeOf(error)}`)));
    });
  }

  /** The domain's addresses: through the configured name servers (A and AAAA), or the system's lookup (which reads /etc/hosts too). */
  private async addressesOf(domain: string): Promise<string[]> {
    try {
      if (this.options.resolvers.length === 0) {
        const found = await this.bounded(lookup(domain, { all: true, verbatim: true }), `looking ${domain} up`);
        return found.map((a) => a.address);
      }
      const resolver = this.resolver();
      const answers = await Promise.allSettled([resolver.resolve4(domain), resolver.resolve6(domain)]);
      const failed = answers.filter((a) => a.status === 'rejected').map((a) => (a as PromiseRejectedResult).reason as NodeJS.ErrnoException);
      const unclear = failed.find((e) => !ABSENT.has(e.code ?? ''));
      if (unclear) throw unclear;
      return answers.flatMap((a) => (a.status === 'fulfilled' ? a.value : []));
    } catch (error) {
      if (ABSENT.has((error as NodeJS.ErrnoException).code ?? '')) return [];
      throw new ProbeFailure(`DNS could not answer the address of ${domain}: ${codeOf(error)}`, false);
    }
  }

  /** A resolver per question: c-ares keeps its servers per instance, and the questions are few. */
  private resolver(): Resolver {
    const resolver = new Resolver({ timeout: this.options.timeoutMs, tries: 1 });
    if (this.options.resolvers.length) resolver.setServers([...this.options.resolvers]);
    return resolver;
  }

  /** Whatever the library's own timeouts, no answer takes longer than twice the check's bound. */
  private bounded<T>(work: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(Object.assign(new Error(`${what} took longer than ${2 * this.options.timeoutMs} ms`), { code: 'ETIMEOUT' })),
        2 * this.options.timeoutMs,
      );
    });
    return Promise.race([work, late]).finally(() => clearTimeout(timer));
  }
}

const codeOf = (error: unknown) => {
  const e = error as NodeJS.ErrnoException;
  return e?.code && !String(e.message).includes(e.code) ? `${e.code} ${e.message}` : String(e?.message ?? error);
};
