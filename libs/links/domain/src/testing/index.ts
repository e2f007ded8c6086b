// The domain's test doubles, for specs only: the data-access specs run the adapters' contract suites on them too.
export { InMemoryBatchRecords } from './in-memory-batch-records';
export { InMemoryLinkShard } from './in-memory-link-shard';
export { plainPasswords, RecordingChangeFeed } from './in-memory-ports';
