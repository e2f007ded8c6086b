// The sharding domain: links spread over shards by the short code, and moved between them online
// (docs/design.md, "Identity, shards and codes", "Online resharding", "Failure containment").
export type {
  FreezeReport,
  JournalEntry,
  LinkShardStore,
  MovableShardStore,
  MoveProgress,
  MoveRecord,
  RingStore,
  RingWatcherInfo,
  ShardMoveStore,
  StoredRow,
  UpsertOutcome,
} from './ports';
export { Resharder, ReshardError, type ReshardPlan, type ReshardReporter, type ReshardStatus, type RingChange } from './resharder';
export { describeSpec, type MovePhase, parseRingVersion, type RingSpec, type RingVersion, ringVersionJson, routerOf } from './ring';
export { RingWatcher } from './ring-watcher';
export { RoutingState } from './routing-state';
export { ShardedLinkRepository } from './sharded-link-repository';
