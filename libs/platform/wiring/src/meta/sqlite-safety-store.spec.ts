import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { InMemorySafetyStore } from '@shortlink/safety-domain/testing';
import { describeSafetyStoreContract } from '@shortlink/safety-store/contract';
import { SqliteMetaStore } from './sqlite-meta-store';

/** The safety tables in the embedded meta database (docs/design.md, "Trust and safety"); the MySQL twin is mysql-safety-store.integration-spec.ts. */
describeSafetyStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-sqlite-safety-'));
  const meta = new SqliteMetaStore(join(dir, 'meta.sqlite'));
  return {
    safety: meta.safety,
    close: async () => {
      await meta.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

// The unit tests' double keeps the same contract.
describeSafetyStoreContract('in-memory', async () => ({ safety: new InMemorySafetyStore(), close: async () => undefined }));
