// The read path (docs/design.md, "Redirect read path"): the caches, limits and budgets between a
// redirect and the link shards, and the shared-cache port its adapters (data-access/cache) implement.
export { ReadPathModule } from './read-path.module';
export { RedirectPipeline } from './redirect-pipeline';
export type { LookupSource, RedirectObserver, RedirectPipelineOptions, RedirectPipelineParts, Resolved } from './redirect-pipeline';
export { ReadPathMetrics } from './read-path.metrics';
export { CachedLinkWriter } from './cached-link-writer';
export { BloomFilter, bloomItem, bloomSize } from './bloom-filter';
export type { BloomOptions } from './bloom-filter';
export { BloomMaintainer } from './bloom-maintainer';
export { CachePolicy } from './cache-policy';
export { L1Cache } from './l1-cache';
export { HotKeyDetector } from './hot-key-detector';
export { HotLinkSnapshotKeeper } from './snapshot';
export { ClickQuota } from './click-quota';
export type { ClickCounts, ClickQuotaObserver, ReservationOutcome } from './click-quota';
export { GlobalRateLimiter } from './global-rate-limiter';
export { PasswordAttempts } from './password-attempts';
export { PasswordCheckGate } from './password-check-gate';
export { CacheKeys } from './cache-keys';
export { CACHE_STORE, SNAPSHOT_STORE } from './ports';
export type { BitmapBits, CacheStore, SnapshotEntry, SnapshotStore } from './ports';
