export { isPlausibleCode, RESERVED_PATHS } from './alias';
export { BatchCreator } from './batch/batch-creator';
export { BulkLinks } from './batch/bulk-links';
export type { BulkOutcome, BulkSelection } from './batch/bulk-links';
export type { BatchOutcome, BatchRow } from './batch/chunk';
export { BATCH_RECORD_STORE } from './batch/ports';
export type { BatchChunkRecord, BatchClaim, BatchClaimOutcome, BatchKey, BatchRecordStore } from './batch/ports';
export { toCachedLink } from './cached-link';
export type { CachedLink } from './cached-link';
export { ChangePropagation } from './change-propagation';
export { HashCodeStrategy, SequenceCodeStrategy } from './codes/code-generator';
export type { CodeStrategy } from './codes/code-generator';
export { SegmentIdAllocator } from './codes/segment-id-allocator';
export { checkPasswordHash, PASSWORD_HASH_BOUNDS } from './link-options';
export { EDITABLE_FIELDS, LinkService } from './link-service';
export type { LinkEdit } from './link-service';
export { identifierOf, NO_OPTIONS, unknownLink } from './link';
export type { Link, LinkOptions, LinkStatus, Moderation, ShortUrlIdentifier } from './link';
export { isAfter, ListCursors, newestFirst } from './listing';
export {
  CODE_SECRET, DuplicateLinkError, LINK_CACHE_WRITER, LINK_CHANGE_FEED, LINK_REPOSITORY, LINK_RESOLVER, PASSWORD_HASHER, SEQUENCE_STORE, URL_POLICY,
} from './ports';
export type {
  IdBlock, InsertOptions, LinkCacheWriter, LinkChange, LinkChangeFeed, LinkListQuery, LinkRepository, LinkResolver, PasswordHasher, ResolvedLink, RetiredCode,
  SequenceStore, StatementOutcome,
} from './ports';
export { LinkRules } from './redirect/link-rules';
export type { ExhaustionView, RedirectDecision } from './redirect/link-rules';
export { encodeQueryPart } from './redirect/target-url';
export { coveredBy, UrlPolicy } from './url-policy';
export type { DomainBlockList, HostResolver } from './url-policy';
