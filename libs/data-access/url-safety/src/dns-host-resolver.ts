import { lookup } from 'dns/promises';
import { HostResolver } from '@shortlink/url-policy';

/**
 * Addresses of a host through the system resolver (URL_DNS_CHECK=true), bounded by a timeout: a
 * slow or hostile name server must not hold a create request.
 */
export class DnsHostResolver implements HostResolver {
  constructor(private readonly timeoutMs: number) {}

  async addresses(host: string): Promise<string[]> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`resolving ${host} took longer than ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      const found = await Promise.race([lookup(host, { all: true, verbatim: true }), timeout]);
      return found.map((a) => a.address);
    } finally {
      clearTimeout(timer);
    }
  }
}
