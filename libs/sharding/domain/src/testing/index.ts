// The sharding domain's test doubles, for specs only: the data-access specs run the adapters' contract suites on them too.
export { InMemoryMovableShard, InMemoryRingStore } from './in-memory-resharding';
