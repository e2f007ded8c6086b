import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { describeSsoStoreContract, metaFixture } from '@shortlink/people-store/contract';
import { SqliteMetaStore } from './sqlite-meta-store';

/** SSO settings and the members SSO signs in, in the embedded meta database (docs/design.md, "Single sign-on"); its MySQL twin is mysql-sso-store.integration-spec.ts. */
describeSsoStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-sqlite-sso-'));
  const meta = new SqliteMetaStore(join(dir, 'meta.sqlite'));
  return {
    ...metaFixture(meta.people, meta.tenants, meta.audit, async () => {
      await meta.close();
      rmSync(dir, { recursive: true, force: true });
    }),
    sso: meta.sso,
  };
});
