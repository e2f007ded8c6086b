import { DOMAIN_PROBES } from '@shortlink/tenants-domain';
import { NetworkDomainProbes } from '@shortlink/domain-probes';
import { portSpec } from '../port';

/**
 * The ownership checks' network side (docs/design.md, "Custom domains and TLS"): DNS through the
 * system resolver or DOMAIN_DNS_RESOLVER, the HTTP check on DOMAIN_HTTP_CHECK_PORT, the certificates
 * of DOMAIN_TLS_FRONT.
 */
export const domainProbesPort = portSpec({
  name: 'domain-probes',
  open: (config) => {
    const d = config.domains;
    return new NetworkDomainProbes({
      resolvers: d.resolvers,
      timeoutMs: d.checkTimeoutMs,
      httpPort: d.httpPort,
      allowPrivate: d.allowPrivate,
      tlsFront: d.tlsFront,
    });
  },
  provides: [[DOMAIN_PROBES, (probes) => probes]],
});
