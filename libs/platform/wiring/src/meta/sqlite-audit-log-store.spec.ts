import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { describeAuditLogStoreContract, describeTransactionalAuditContract } from '@shortlink/audit-store/contract';
import { SqliteMetaStore } from './sqlite-meta-store';

/** The audit log in the embedded meta database (docs/design.md, "Audit log"); its MySQL twin is mysql-audit-log-store.integration-spec.ts. */
function openMeta() {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-sqlite-audit-'));
  const meta = new SqliteMetaStore(join(dir, 'meta.sqlite'));
  return {
    meta,
    close: async () => {
      await meta.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describeAuditLogStoreContract('sqlite', async () => {
  const { meta, close } = openMeta();
  return { audit: meta.audit, close };
});

describeTransactionalAuditContract('sqlite', async () => {
  const { meta, close } = openMeta();
  return { tenants: meta.tenants, settings: meta.domainSettings, audit: meta.audit, close };
});
