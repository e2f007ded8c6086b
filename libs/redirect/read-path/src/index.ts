// The read path (docs/design.md, "Redirect read path"): the caches, limits and budgets between a
// redirect and the link shards, and the shared-cache port its adapters (data-access/cache) implement.
export {
  type BloomAnswer,
  BloomFilter,
  type BloomGeneration,
  type BloomLayout,
  BloomLayoutUnknown,
  type BloomOptions,
  bloomItem,
  bloomSize,
  estimateItems,
  generationBytes,
  generationRate,
  planGeneration,
} from './bloom-filter';
export { BLOOM_LOCK_TTL_MS, BloomMaintainer, GROW_AT, type RebuildReport, REBUILD_HEADROOM } from './bloom-maintainer';
export { CacheKeys } from './cache-keys';
export { CachePolicy } from './cache-policy';
export {
  CLICK_LEASE_STORE,
  type ClickLeaseAnswer,
  type ClickLeaseCall,
  type ClickLeaseStore,
  type ClickQuotaRecord,
  LocalClickLeases,
  peekClickQuota,
  settleClickQuota,
} from './click-leases';
export { ClickQuota } from './click-quota';
export { GlobalRateLimiter } from './global-rate-limiter';
export { HotKeyDetector } from './hot-key-detector';
export { L1Cache, l1EntryBytes } from './l1-cache';
export { PasswordAttempts } from './password-attempts';
export { PasswordCheckGate } from './password-check-gate';
export { type BitmapBits, CACHE_STORE, type CacheStore, SNAPSHOT_STORE, type SnapshotEntry, type SnapshotStore } from './ports';
export { ReadPathMetrics } from './read-path.metrics';
export { ReadPathModule } from './read-path.module';
export { type LookupSource, type RedirectObserver, RedirectPipeline, type RedirectPipelineOptions } from './redirect-pipeline';
export { HotLinkSnapshotKeeper } from './snapshot';
