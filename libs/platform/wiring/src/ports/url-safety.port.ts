import { URL_POLICY } from '@shortlink/links-domain';
import { UrlPolicy } from '@shortlink/url-policy';
import { DnsHostResolver, FileDomainBlockList } from '@shortlink/url-safety';
import { portSpec } from '../port';

/** The URL safety policy with its block list (BLOCKED_DOMAINS_FILE) and, with URL_DNS_CHECK=true, DNS; generation adds the tenants' domains. */
export const urlSafetyPort = portSpec({
  name: 'url-safety',
  open: (config) => {
    const safety = config.links.urlSafety;
    const blockList = new FileDomainBlockList(safety.blockedDomainsFile);
    return new UrlPolicy({ shortDomains: config.links.domains, blockList, resolver: safety.dnsCheck ? new DnsHostResolver(safety.dnsTimeoutMs) : null });
  },
  provides: [[URL_POLICY, (policy) => policy]],
});
