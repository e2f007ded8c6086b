// The sharding domain: links spread over shards by the short code, and moved between them online
// (docs/design.md, "Identity, shards and codes", "Online resharding", "Failure containment").
export { ShardedLinkRepository } from './sharded-link-repository';
export type { ShardedLinkRepositoryOptions } from './sharded-link-repository';
export { RoutingState } from './routing-state';
export { RingWatcher } from './ring-watcher';
export type { RingWatcherOptions, RingWatcherStatus } from './ring-watcher';
export { Resharder, ReshardError, sameSpec, targetSpec } from './resharder';
export type { ReshardPlan, ReshardReporter, ReshardStatus, ResharderOptions, RingChange } from './resharder';
export { checkRingSpec, describeSpec, parseRingVersion, ringVersionJson, routerOf, shardsOf } from './ring';
export type { MovePhase, RingMove, RingSpec, RingVersion } from './ring';
export { isMovable } from './ports';
export type {
  FlowCheck, LinkShardStore, MovableShardStore, MoveProgress, MoveRecord, MoveStep, RingStore, RingWatcherInfo, ShardMoveStore, StoredRow, UpsertOutcome,
} from './ports';
