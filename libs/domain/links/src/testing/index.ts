// The domain's test doubles, for specs only: the data-access specs run the adapters' contract suites on them too.
export { InMemoryBatchRecords } from './in-memory-batch-records';
export { InMemoryLinkShard } from './in-memory-link-shard';
export { InMemoryOutbox } from './in-memory-outbox';
export { plainPasswords, RecordingChangeFeed, RecordingLinkCache } from './in-memory-ports';
export { relayOver } from './relay';
export { aTestLink } from './links';
