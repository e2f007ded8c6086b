// The links domain: links, their creation and edits, listing, the shape of a redirect's rules (their
// evaluation at redirect time is @shortlink/redirect-rules), and
// the ports the sharding lib (LinkRepository) and the read path (LinkResolver, LinkCacheWriter) implement.
export { ALIAS_PATTERN, isPlausibleCode, RESERVED_PATHS } from './alias';
export { type CachedLink, type RedirectRules, toCachedLink } from './cached-link';
export { CacheEventConsumer } from './events/cache-consumer';
export {
  createdEvent,
  deletedEvent,
  editedEvent,
  eventKey,
  LINK_EVENT_KINDS,
  LINK_EVENT_OUTBOXES,
  type LinkChangeEvent,
  type LinkEventKind,
  type LinkEventOutbox,
  type LinkEventOutboxes,
  type OutboxEvent,
  type OutboxStamp,
  UNCLAIMED,
} from './events/link-events';
export { type LinkEventConsumer, LinkEventRelay, type LinkEventRelayOptions, type RelayCounts } from './events/outbox-relay';
export type { LinkCreation, PreparedLink } from './link-service';
export { SegmentIdAllocator } from './segment-id-allocator';
export {
  identifierOf,
  type Link,
  type LinkOptions,
  type AppTargets,
  type HealthState,
  type LinkHealth,
  type ModerationSource,
  targetsOf,
  type LinkSocial,
  type LinkStatus,
  type Moderation,
  NO_OPTIONS,
  type ShortUrlIdentifier,
  unknownLink,
  type Utm,
} from './link';
export { LINK_COMMANDS, LinkCommands } from './link-commands';
export { type BulkChangeSelection, everyHook, LINK_CHANGE_HOOKS, type LinkChangeHooks, type LinkCounts } from './link-change-hooks';
export {
  checkPasswordHash,
  DEFAULT_CONVERSION_PARAM,
  DEFAULT_PASSWORD_REMEMBER_HOURS,
  LIMITS as LINK_LIMITS,
  PASSWORD_HASH_BOUNDS,
  UTM_KEYS,
} from './link-options';
export { type AfterCommit, EDITABLE_FIELDS, type LinkEdit, LinkService, type LinkUpdate, MAX_TAGS_LISTED } from './link-service';
export { isAfter, ListCursors, newestFirst } from './listing';
export {
  CHANGE_HEARTBEAT_MS,
  CODE_SECRET,
  domainSettingsChange,
  DuplicateLinkError,
  type IdBlock,
  type HealthFilter,
  type InsertOptions,
  isDomainSettingsChange,
  isTenantsChange,
  LINK_CACHE_WRITER,
  LINK_CHANGE_FEED,
  LINK_OBSERVER,
  LINK_REPOSITORY,
  LINK_RESOLVER,
  type LinkCacheWriter,
  type LinkChange,
  type LinkChangeFeed,
  type LinkListQuery,
  type LinkObserver,
  type LinkRepository,
  type LinkResolver,
  PASSWORD_HASHER,
  type PasswordHasher,
  type ResolvedLink,
  type RetiredCode,
  SEQUENCE_STORE,
  type SequenceStore,
  type StatementOutcome,
  TARGET_REPUTATION,
  tenantsChange,
  URL_POLICY,
} from './ports';
export {
  checkRedirectRules,
  CONDITION_TYPES,
  deviceTargetsOf,
  geoTargetsOf,
  normaliseAddressPattern,
  normaliseLanguage,
  type RedirectCondition,
  type RedirectConditionType,
  type RedirectRule,
  RULE_BROWSERS,
  RULE_DEVICES,
  RULE_LIMITS,
  RULE_SYSTEMS,
  rulesFromTargets,
} from './redirect-rules';
export { checkTagTracking, TAG_TRACKING_STORE, tagConversionParamOf, type TagSettings, type TagTrackingStore, withTagTracking } from './tag-tracking';
