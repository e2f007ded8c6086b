import { join } from 'path';
import { SEQUENCE_STORE } from '@shortlink/links-domain';
import { TENANT_STORE } from '@shortlink/tenants-domain';
import { LazyMysqlMetaStore, SqliteMetaStore } from '@shortlink/link-store';
import { itself, portSpec } from '../port-spec';

/** Tenants, API keys and id sequences: the shard-independent database. */
export const metaPort = portSpec({
  name: 'meta-db',
  open: (config) => (config.db.driver === 'mysql' ? new LazyMysqlMetaStore({ url: config.db.metaUrl, poolSize: config.db.poolSize }) : new SqliteMetaStore(join(config.runtime.dataDir, 'meta.sqlite'))),
  provides: [
    [TENANT_STORE, (store) => store.tenants],
    [SEQUENCE_STORE, itself],
  ],
  close: (store) => store.close(),
  probes: (store) => [{ name: 'meta-db', check: () => store.ping() }],
});
