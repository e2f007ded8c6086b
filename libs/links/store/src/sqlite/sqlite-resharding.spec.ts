import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { describeRingStoreContract, describeShardMoveContract } from '../contract/resharding.contract';
import { SqliteLinkShardStore } from './sqlite-link-shard-store';
import { SqliteRingStore } from './sqlite-ring-store';
import { LINKS_SQLITE_MIGRATIONS } from './migrations';

describeShardMoveContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-move-'));
  const a = new SqliteLinkShardStore('a', join(dir, 'a.sqlite'));
  const b = new SqliteLinkShardStore('b', join(dir, 'b.sqlite'));
  return {
    a,
    b,
    close: async () => {
      await a.close();
      await b.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describeRingStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-ring-'));
  const ring = new SqliteRingStore(join(dir, 'meta.sqlite'), LINKS_SQLITE_MIGRATIONS);
  return {
    ring,
    close: async () => {
      await ring.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
