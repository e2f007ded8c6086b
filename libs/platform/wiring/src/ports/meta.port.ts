import { join } from 'path';
import { SEQUENCE_STORE, TAG_TRACKING_STORE } from '@shortlink/links-domain';
import { BATCH_RECORD_STORE } from '@shortlink/link-batch';
import { DOMAIN_OWNERSHIP_STORE, DOMAIN_SETTINGS_STORE, TENANT_STORE } from '@shortlink/tenants-domain';
import { AUDIT_LOG_STORE } from '@shortlink/audit-domain';
import { PEOPLE_STORE, SSO_STORE } from '@shortlink/people-domain';
import { WEBHOOK_STORE } from '@shortlink/webhooks-domain';
import { SAFETY_STORE } from '@shortlink/safety-domain';
import { CONVERSION_STORE } from '@shortlink/clicks-domain';
import { LazyMysqlMetaStore, SqliteMetaStore } from '../meta';
import { itself, portSpec } from '../port';

/** Tenants, API keys, their domains' settings and ownership, id sequences, batch idempotency records, the audit log, members and sessions, SSO settings, the webhooks and the safety tables: the shard-independent database. */
export const metaPort = portSpec({
  name: 'meta-db',
  open: (config) =>
    config.db.driver === 'mysql'
      ? new LazyMysqlMetaStore({ url: config.db.metaUrl, poolSize: config.db.poolSize })
      : new SqliteMetaStore(join(config.runtime.dataDir, 'meta.sqlite')),
  provides: [
    [TENANT_STORE, (store) => store.tenants],
    [DOMAIN_SETTINGS_STORE, (store) => store.domainSettings],
    [DOMAIN_OWNERSHIP_STORE, (store) => store.domainOwnership],
    [SEQUENCE_STORE, itself],
    [BATCH_RECORD_STORE, (store) => store.batches],
    [AUDIT_LOG_STORE, (store) => store.audit],
    [WEBHOOK_STORE, (store) => store.webhooks],
    [PEOPLE_STORE, (store) => store.people],
    [SSO_STORE, (store) => store.sso],
    [SAFETY_STORE, (store) => store.safety],
    [CONVERSION_STORE, (store) => store.conversions],
    // Conversion tracking on tags, kept with the conversion settings (docs/design.md, "Conversions").
    [TAG_TRACKING_STORE, (store) => store.conversions],
  ],
  close: (store) => store.close(),
  probes: (store) => [{ name: 'meta-db', check: () => store.ping() }],
});
