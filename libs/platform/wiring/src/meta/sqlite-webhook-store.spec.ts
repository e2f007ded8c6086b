import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { InMemoryWebhookStore } from '@shortlink/webhooks-domain/testing';
import { describeWebhookStoreContract } from '@shortlink/webhooks-store/contract';
import { SqliteMetaStore } from './sqlite-meta-store';

/** Webhooks in the embedded meta database (docs/design.md, "Webhooks"); its MySQL twin is mysql-webhook-store.integration-spec.ts. */
describeWebhookStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-sqlite-webhooks-'));
  const meta = new SqliteMetaStore(join(dir, 'meta.sqlite'));
  return {
    webhooks: meta.webhooks,
    close: async () => {
      await meta.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

// The unit tests' double keeps the same contract.
describeWebhookStoreContract('in-memory', async () => ({ webhooks: new InMemoryWebhookStore(), close: async () => undefined }));
