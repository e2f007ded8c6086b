import { InMemoryAuditLogStore } from '@shortlink/audit-domain/testing';
import { describeAuditLogStoreContract } from './contract/audit-log-store.contract';

// The domain's specs run on the in-memory doubles (a domain lib may not depend on the adapters): the
// doubles keep the adapters' rules only if they pass the same contract suites (as libs/links/store's).

describeAuditLogStoreContract('in-memory double', async () => ({ audit: new InMemoryAuditLogStore(), close: async () => undefined }));
