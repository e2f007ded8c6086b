import { DomainError, ErrorCode } from '@shortlink/core';
import { ProbeAnswer, ProbeFailure, ProbeFailureReason, TargetHttp } from '@shortlink/safety-domain';
import { checkedAddressesOf, CheckedDestination, DestinationGuard, HostResolver } from '@shortlink/url-policy';
import { headerOf, OutboundSend } from './outbound';

/**
 * The requests of the dead-link checks over the pinned client (docs/design.md, "Trust and safety"):
 * to an address the guard checked for this very request, redirects not followed (the check follows
 * them itself, each hop through the guard again). Failures become the words the tenant is shown.
 */
export class PinnedTargetHttp implements TargetHttp {
  constructor(private readonly send: OutboundSend) {}

  async request(url: string, method: 'HEAD' | 'GET'): Promise<ProbeAnswer> {
    try {
      const answer = await this.send(url, { method, headers: { accept: '*/*' } });
      return { status: answer.status, location: headerOf(answer.headers, 'location'), retryAfter: headerOf(answer.headers, 'retry-after') };
    } catch (error) {
      throw new ProbeFailure(failureOf(error), error instanceof Error ? error.message : String(error));
    }
  }
}

const TLS_CODES = /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH|ERR_CERT)/;

function failureOf(error: unknown): ProbeFailureReason {
  if (error instanceof DomainError) {
    const reason = error.details.reason;
    if (reason === 'private-address' || reason === 'unresolvable') return reason;
    return 'invalid-url';
  }
  const code = String((error as { code?: unknown })?.code ?? '');
  const message = error instanceof Error ? error.message : '';
  if (code === 'ECONNREFUSED') return 'connection-refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'unresolvable';
  if (TLS_CODES.test(code)) return 'tls';
  if (/no answer within/.test(message) || code === 'ETIMEDOUT' || code === 'ABORT_ERR') return 'timeout';
  return 'connection-failed';
}

/** A resolver that answers fixed names first (LINK_CHECK_HOSTS, as curl's --resolve; `*.suffix` covers the names under it). */
export class FixedHostResolver implements HostResolver {
  constructor(
    private readonly base: HostResolver,
    private readonly fixed: ReadonlyArray<{ readonly name: string; readonly address: string }>,
  ) {}

  async addresses(host: string): Promise<string[]> {
    const name = host.toLowerCase().replace(/\.$/, '');
    const hit = this.fixed.find((f) => (f.name.startsWith('*.') ? name.endsWith(f.name.slice(1)) : f.name === name));
    return hit ? [hit.address] : this.base.addresses(host);
  }
}

/**
 * Where the dead-link checks may connect (docs/design.md, "Trust and safety"): an http(s) URL whose
 * host resolves, each address public unless LINK_CHECK_ALLOW_PRIVATE; the client connects to one
 * of the addresses checked here (no second lookup a rebinding name could change).
 */
export class LinkCheckGuard implements DestinationGuard {
  constructor(
    private readonly resolver: HostResolver,
    private readonly allowPrivate: boolean,
  ) {}

  async resolve(raw: string): Promise<CheckedDestination> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new DomainError(ErrorCode.INVALID_URL, 'the target is not an absolute URL', { field: 'url' });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new DomainError(ErrorCode.INVALID_URL, 'only http and https targets are checked', { field: 'url' });
    const addresses = await checkedAddressesOf(url, this.resolver, {
      allowPrivate: this.allowPrivate,
      field: 'url',
      privateHint: 'LINK_CHECK_ALLOW_PRIVATE=true allows it',
    });
    return { url, addresses };
  }
}

/**
 * Where the operators' own URLs may go (feeds, the Web Risk endpoint): they are configured, not given
 * by a tenant, so a private address is allowed; the client still connects to the address checked.
 */
export class OperatorDestinations implements DestinationGuard {
  constructor(private readonly resolver: HostResolver) {}

  async resolve(raw: string): Promise<CheckedDestination> {
    const url = new URL(raw);
    const addresses = await checkedAddressesOf(url, this.resolver, { allowPrivate: true, field: 'url', privateHint: '' });
    return { url, addresses };
  }
}
