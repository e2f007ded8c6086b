// The domain's test double, for specs only: the data-access specs run the adapters' contract suite on it too.
export { InMemoryPeopleStore } from './in-memory-people-store';
