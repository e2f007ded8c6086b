import { BlockList, isIP } from 'net';
import type { IncomingMessage } from 'http';
import type { Cidr } from '@shortlink/config';

/** Hops of X-Forwarded-For looked at, from the right: a longer chain is not believed further. */
const MAX_HOPS = 16;
/** Addresses whose trust is remembered (the proxies, and the clients seen through them). */
const MAX_REMEMBERED = 10_000;
/** Longer hops are read every time, not remembered (an IPv6 address with spaces around it fits). */
const MAX_REMEMBERED_HOP = 64;

/** `::ffff:192.0.2.1` (an IPv4 client on a dual-stack socket) is `192.0.2.1`. */
export function normalizeAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address.toLowerCase();
}

/**
 * The client's address as seen through TRUSTED_PROXIES (docs/design.md, "Security model").
 * X-Forwarded-For is believed only when the connection comes from a trusted proxy; then the chain
 * is read from the right, and the first hop that is not itself a trusted proxy is the client. A
 * hop that is not an IP address stops the walk: the last trusted hop is the answer, so a forged
 * or malformed value can never become a limiter key or a visitor.
 */
export class ClientAddressResolver {
  private readonly trusted = new BlockList();
  /**
   * Answers of `trusted.check`, which builds a SocketAddress per call: 13 % of a redirect's CPU
   * behind a proxy (docs/benchmarks.md). Bounded: emptied when full.
   */
  private readonly answers = new Map<string, boolean>();
  /** Hops of X-Forwarded-For as written, normalized ('' for what is not an address): bounded, emptied when full. */
  private readonly hops = new Map<string, string>();
  readonly trustsNobody: boolean;

  constructor(proxies: readonly Cidr[]) {
    for (const p of proxies) this.trusted.addSubnet(p.address, p.prefix, p.family);
    this.trustsNobody = proxies.length === 0;
  }

  isTrusted(address: string): boolean {
    let trusted = this.answers.get(address);
    if (trusted === undefined) {
      const family = isIP(address);
      trusted = family !== 0 && this.trusted.check(address, family === 4 ? 'ipv4' : 'ipv6');
      if (this.answers.size >= MAX_REMEMBERED) this.answers.clear();
      this.answers.set(address, trusted);
    }
    return trusted;
  }

  /** A hop of X-Forwarded-For as written: its address normalized, '' when it is none. Remembered (a visitor's hops repeat). */
  private hopOf(text: string): string {
    let hop = this.hops.get(text);
    if (hop === undefined) {
      const address = normalizeAddress(text.trim());
      hop = isIP(address) === 0 ? '' : address;
      if (text.length <= MAX_REMEMBERED_HOP) {
        if (this.hops.size >= MAX_REMEMBERED) this.hops.clear();
        this.hops.set(text, hop);
      }
    }
    return hop;
  }

  /** The client address of a request on a plain node:http server. */
  of(req: IncomingMessage): string {
    return this.resolve(req.socket.remoteAddress ?? '', req.headers['x-forwarded-for']);
  }

  /**
   * Whether the visitor reached us over https: a TLS socket, or `X-Forwarded-Proto: https` (its
   * first value, the scheme the edge proxy saw) on a connection from a trusted proxy.
   */
  isHttps(req: IncomingMessage): boolean {
    if ((req.socket as { encrypted?: boolean }).encrypted === true) return true;
    const proto = req.headers['x-forwarded-proto'];
    if (proto === undefined || this.trustsNobody || !this.isTrusted(normalizeAddress(req.socket.remoteAddress ?? ''))) return false;
    const first = (Array.isArray(proto) ? proto[0] : proto).split(',')[0];
    return first.trim().toLowerCase() === 'https';
  }

  resolve(socketAddress: string, forwardedFor: string | string[] | undefined): string {
    let client = normalizeAddress(socketAddress);
    if (this.trustsNobody || forwardedFor === undefined || !this.isTrusted(client)) return client;
    const chain = Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor;
    let end = chain.length;
    for (let hops = 0; hops < MAX_HOPS && end > 0; hops++) {
      const start = chain.lastIndexOf(',', end - 1);
      const hop = this.hopOf(chain.slice(start + 1, end));
      if (hop === '') return client;
      client = hop;
      if (!this.isTrusted(hop)) return client;
      end = start < 0 ? 0 : start;
    }
    return client;
  }
}
