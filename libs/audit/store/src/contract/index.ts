export { describeAuditLogStoreContract, describeTransactionalAuditContract } from './audit-log-store.contract';
