/** The webhooks context's migrations of the SQLite meta database, in order (the meta database's whole list: @shortlink/wiring's metaMigrations). */
export const WEBHOOKS_SQLITE_MIGRATIONS = [
  {
    // Webhook endpoints (secrets sealed, docs/design.md "Webhooks") and their deliveries: one row per
    // message and endpoint, its id the `webhook-id`; due ones found by (status, next_attempt_at). Times in epoch ms.
    name: '009_webhooks',
    up: `
      CREATE TABLE webhooks (
        id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, url TEXT NOT NULL, events TEXT NOT NULL, description TEXT NOT NULL,
        enabled INTEGER NOT NULL, disabled_reason TEXT, secret TEXT NOT NULL, previous_secret TEXT, previous_secret_until INTEGER,
        failing_since INTEGER, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
      CREATE INDEX idx_webhooks_tenant ON webhooks (tenant_id, created_at);
      CREATE TABLE webhook_deliveries (
        id TEXT PRIMARY KEY, webhook_id TEXT NOT NULL, tenant_id TEXT NOT NULL, event_type TEXT NOT NULL, payload TEXT NOT NULL,
        status TEXT NOT NULL, attempts INTEGER NOT NULL, last_error TEXT, last_status_code INTEGER, next_attempt_at INTEGER,
        created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
      CREATE INDEX idx_webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
      CREATE INDEX idx_webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at, id);`,
  },
];
