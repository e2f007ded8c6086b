import { BlockList, isIP } from 'net';
import { DomainError, ErrorCode } from '@shortlink/core';

/** Addresses nothing public lives at: RFC 6890 special-purpose ranges (IPv4 and IPv6) and their successors. */
const NON_PUBLIC = (() => {
  const list = new BlockList();
  for (const [net, prefix] of [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
    ['192.88.99.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
    ['224.0.0.0', 4],
    ['240.0.0.0', 4],
  ] as const)
    list.addSubnet(net, prefix, 'ipv4');
  for (const [net, prefix] of [
    ['::', 128],
    ['::1', 128],
    // NAT64 for local use (RFC 8215): whatever it translates to is someone's own network.
    ['64:ff9b:1::', 48],
    ['100::', 64],
    // IETF protocol assignments, Teredo (2001::/32) among them: never a public service.
    ['2001::', 23],
    ['2001:db8::', 32],
    ['3fff::', 20],
    ['5f00::', 16],
    ['fc00::', 7],
    ['fe80::', 10],
    ['fec0::', 10],
    ['ff00::', 8],
  ] as const)
    list.addSubnet(net, prefix, 'ipv6');
  return list;
})();

/** The 16 bytes of an IPv6 address (its zone dropped), or null when it is not one. */
function ipv6Bytes(address: string): number[] | null {
  let text = address.replace(/%.*$/, '');
  if (isIP(text) !== 6) return null;
  let last4: number[] = [];
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    last4 = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}0:0`;
  }
  const words = (part: string) => (part ? part.split(':').map((w) => parseInt(w, 16)) : []);
  const [left, right] = text.split('::');
  const head = words(left);
  const tail = right === undefined ? [] : words(right);
  const all = right === undefined ? head : [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  const bytes = all.flatMap((w) => [w >> 8, w & 0xff]);
  if (dotted) bytes.splice(12, 4, ...last4);
  return bytes;
}

/**
 * The IPv4 addresses an IPv6 address carries by a standard embedding or translation: IPv4-compatible
 * `::a.b.c.d` (deprecated; `::` and `::1` carry 0.0.0.0 and 0.0.0.1), IPv4-mapped `::ffff:a.b.c.d`,
 * SIIT's IPv4-translated `::ffff:0:a.b.c.d`, NAT64's `64:ff9b::a.b.c.d`, 6to4's `2002:aabb:ccdd::/48`,
 * and Teredo's `2001:0:<server>:…:<client, inverted>`. Empty for any other address. A connection to
 * one of these may reach the IPv4 address inside (the kernel for the first three, a translator or
 * relay for the others), so it is judged as that address.
 */
export function embeddedIpv4(address: string): string[] {
  const b = ipv6Bytes(address);
  if (!b) return [];
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const v4 = (at: number, mask = 0) => [0, 1, 2, 3].map((i) => b[at + i] ^ mask).join('.');
  if (zero(0, 10) && ((b[10] === 0 && b[11] === 0) || (b[10] === 0xff && b[11] === 0xff))) return [v4(12)];
  if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && b[10] === 0 && b[11] === 0) return [v4(12)];
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12)) return [v4(12)];
  if (b[0] === 0x20 && b[1] === 0x02) return [v4(2)];
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0) return [v4(4), v4(12, 0xff)];
  return [];
}

/**
 * Whether an address is a public one (docs/design.md, "Security model"): not in a special-purpose
 * range, and, for an IPv6 address that carries an IPv4 address (embeddedIpv4), that IPv4 address
 * public too: `::7f00:1` and `::ffff:0:7f00:1` are 127.0.0.1.
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address.replace(/%.*$/, ''));
  if (family === 0) return false;
  if (family === 6 && embeddedIpv4(address).some((inner) => !isPublicAddress(inner))) return false;
  return !NON_PUBLIC.check(address.replace(/%.*$/, ''), family === 4 ? 'ipv4' : 'ipv6');
}

/** Resolves a host name to its addresses, bounded by the adapter's timeout (URL_DNS_CHECK, webhooks, SSO providers). */
export interface HostResolver {
  addresses(host: string): Promise<string[]>;
}

/** A URL the platform connects to itself, and the addresses its host resolved to, each checked: the connection goes to one of these. */
export interface CheckedDestination {
  readonly url: URL;
  readonly addresses: readonly string[];
}

/**
 * What decides where an outbound call may go (webhooks, a tenant's OpenID provider): the URL checked,
 * its host resolved once and every address checked. The caller connects to one of the addresses it
 * answers, never resolves again (docs/design.md, "Security model"), so a name whose DNS changes
 * between the check and the connection (rebinding) cannot take it elsewhere.
 */
export interface DestinationGuard {
  resolve(raw: string): Promise<CheckedDestination>;
}

/**
 * The addresses a URL's host stands for (a literal address is its own), each public unless
 * `allowPrivate`; 400 URL_NOT_ALLOWED `unresolvable` or `private-address` otherwise, naming `field`
 * and, for a private address, how the deployment allows it (`privateHint`).
 */
export async function checkedAddressesOf(
  url: URL,
  resolver: HostResolver,
  options: { allowPrivate: boolean; field: string; privateHint: string },
): Promise<string[]> {
  const { field } = options;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = await resolver.addresses(host);
    } catch {
      addresses = [];
    }
    if (!addresses.length) throw new DomainError(ErrorCode.URL_NOT_ALLOWED, `${field}: ${host} does not resolve`, { reason: 'unresolvable', field });
  }
  if (!options.allowPrivate && addresses.some((a) => !isPublicAddress(a)))
    throw new DomainError(ErrorCode.URL_NOT_ALLOWED, `${field}: ${host} is or resolves to a non-public address (${options.privateHint})`, {
      reason: 'private-address',
      field,
    });
  return addresses;
}
