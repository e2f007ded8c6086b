// The network side of the ownership checks of tenants' domains (docs/design.md, "Custom domains and TLS").
export { NetworkDomainProbes, type NetworkDomainProbesOptions } from './network-domain-probes';
