// The domain's test doubles, for specs only: the data-access specs run the adapters' contract suites on them too.
export { InMemoryLinkRepository } from './in-memory-link-repository';
export { InMemoryLinkShard } from './in-memory-link-shard';
export { InMemoryOutbox } from './in-memory-outbox';
export { plainPasswords, RecordingChangeFeed, RecordingLinkCache } from './in-memory-ports';
export { relayOver } from './relay';
export { aTestLink } from './links';
