// The URL policy every target of a link passes, and the address checks of every outbound call (docs/design.md, "Security model").
export { type CheckedDestination, checkedAddressesOf, type DestinationGuard, embeddedIpv4, type HostResolver, isPublicAddress } from './addresses';
export { type ReputationVerdict, strongerVerdict, type TargetReputation, type VerdictState } from './reputation';
export {
  type CheckedUrl,
  coveredBy,
  type DomainBlockList,
  type HostLookups,
  MAX_URL_LENGTH,
  type ParsedTarget,
  parseTarget,
  type TargetError,
  type UrlFlag,
  UrlPolicy,
} from './url-policy';
