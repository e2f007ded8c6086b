// The domain's test double, for specs only: the data-access specs run the adapters' contract suite on it too.
export { InMemoryAuditLogStore } from './in-memory-audit-log-store';
