import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { InMemoryConversionStore } from '@shortlink/clicks-domain';
import { describeConversionStoreContract } from '@shortlink/olap/contract';
import { SqliteMetaStore } from './sqlite-meta-store';

/** Conversions in the embedded meta database (docs/design.md, "Conversions"); its MySQL twin is mysql-conversion-store.integration-spec.ts. */
describeConversionStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-sqlite-conversions-'));
  const meta = new SqliteMetaStore(join(dir, 'meta.sqlite'));
  return {
    conversions: meta.conversions,
    close: async () => {
      await meta.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

// The unit tests' double keeps the same contract.
describeConversionStoreContract('in-memory', async () => ({ conversions: new InMemoryConversionStore(), close: async () => undefined }));
