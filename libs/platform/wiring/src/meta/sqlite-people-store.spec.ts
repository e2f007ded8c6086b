import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { describePeopleStoreContract, metaFixture } from '@shortlink/people-store/contract';
import { SqliteMetaStore } from './sqlite-meta-store';

/** Members and sessions in the embedded meta database (docs/design.md, "People and sessions"); its MySQL twin is mysql-people-store.integration-spec.ts. */
describePeopleStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-sqlite-people-'));
  const meta = new SqliteMetaStore(join(dir, 'meta.sqlite'));
  return metaFixture(meta.people, meta.tenants, meta.audit, async () => {
    await meta.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
