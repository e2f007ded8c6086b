// The sharding domain: links spread over shards by the short code, and moved between them online
// (docs/design.md, "Identity, shards and codes", "Online resharding", "Failure containment").
export type {
  LinkShardStore, MovableShardStore, MoveProgress, MoveRecord, RingStore, RingWatcherInfo, ShardMoveStore, StoredRow, UpsertOutcome,
} from './ports';
export { Resharder, ReshardError } from './resharder';
export type { ReshardPlan, ReshardReporter, ReshardStatus, RingChange } from './resharder';
export { RingWatcher } from './ring-watcher';
export { describeSpec, parseRingVersion, ringVersionJson, routerOf } from './ring';
export type { MovePhase, RingSpec, RingVersion } from './ring';
export { RoutingState } from './routing-state';
export { ShardedLinkRepository } from './sharded-link-repository';
