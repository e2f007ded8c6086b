// The URL policy every target of a link passes (docs/design.md, "Security model", URL safety).
export {
  type CheckedUrl,
  coveredBy,
  type DomainBlockList,
  type HostLookups,
  type HostResolver,
  isPublicAddress,
  MAX_URL_LENGTH,
  type UrlFlag,
  UrlPolicy,
} from './url-policy';
export { type ReputationVerdict, strongerVerdict, type TargetReputation, type VerdictState } from './reputation';
