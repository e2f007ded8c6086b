// Trust and safety (docs/design.md, "Trust and safety"): the reputation of targets (threat feeds,
// Web Risk), the index of link targets by host, dead-link checks, visitors' reports, the operators'
// queue, and a tenant's choice for visitors of broken links.
export { BrokenLinkDirectory, type BrokenLinkSettingsInput, BrokenLinkSettingsService, DEFAULT_BROKEN_LINK_SETTINGS } from './broken-links';
export { parseFeed, parseHostList, parseOpenphish, parsePhishtank, parseUrlhaus } from './feed-formats';
export { FeedWatcher, type FeedWatcherOptions } from './feed-watcher';
export { hostOfTarget, indexedLinkOf, linkHealthOf, urlHashOf } from './health';
export { LiveRecheck } from './live-recheck';
export { type SafetyLinks, safetyLinksOf, type SafetyNotices } from './notices';
export {
  type AbuseReport,
  type BrokenLinkMode,
  type BrokenLinkSettings,
  type CheckRecord,
  FEED_READER,
  type FeedReader,
  type FeedStateStore,
  type FeedValidator,
  type IndexedLink,
  type IndexedTarget,
  type LeaseStore,
  type LinkRef,
  type LinkTargetIndex,
  MODERATION_ACTIONS,
  type ModerationAction,
  type ModerationQueueStore,
  type ProbeAnswer,
  ProbeFailure,
  type ProbeFailureReason,
  type QueueItem,
  type QueuePosition,
  type QueueState,
  REMOTE_REPUTATION,
  type RemoteReputation,
  REPORT_REASONS,
  type ReportReason,
  type ReportStore,
  SAFETY_STORE,
  type SafetySettingsStore,
  type SafetyStore,
  TARGET_HTTP,
  type TargetHttp,
  type TargetRecord,
  type TargetState,
} from './ports';
export { type ProbeOptions, type ProbeOutcome, probeTarget, retryAfterMs } from './probe';
export { MAX_REPORT_DETAILS, type ReportInput, ReportIntake, type ReportLimit, ReportRelay, visitorReportIntake } from './reports';
export { FeedSet, type ReputationOptions, ReputationService } from './reputation';
export { type TargetCheckOptions, TargetChecks } from './target-checks';
export { SafetySweep, type SweepOptions, TargetIndexer, type TargetIndexerOptions } from './target-indexer';
export {
  defaultAction,
  FEED_FORMATS,
  type FeedFormat,
  type FeedSpec,
  feedSource,
  normalHost,
  reversedHost,
  type ThreatEntry,
  ThreatIndex,
  urlKeyOf,
  verdictOf,
} from './threats';
