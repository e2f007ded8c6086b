import { sqliteGrantToFirstKeys as grantToFirstKeys } from '@shortlink/sql';

/** The audit context's migrations of the SQLite meta database, in order (the meta database's whole list: @shortlink/wiring's metaMigrations). */
export const AUDIT_SQLITE_MIGRATIONS = [
  {
    // The audit log: a tenant's (log_id = its id) or the operators' (log_id = 'operator'), newest
    // first by (at, seq); and `audit:read` for each tenant's first key, its oldest (docs/design.md, "Audit log").
    name: '006_audit_log',
    up: `
      CREATE TABLE audit_log (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, log_id TEXT NOT NULL, at INTEGER NOT NULL,
        actor_type TEXT NOT NULL, actor_id TEXT NOT NULL, actor_name TEXT NOT NULL, action TEXT NOT NULL,
        target_type TEXT NOT NULL, target_id TEXT, target_domain TEXT, client_address TEXT, changes TEXT, details TEXT);
      CREATE UNIQUE INDEX uq_audit_log_id ON audit_log (id);
      CREATE INDEX idx_audit_log_log ON audit_log (log_id, at, seq);
      CREATE INDEX idx_audit_log_actor ON audit_log (log_id, actor_id, at, seq);
      CREATE INDEX idx_audit_log_target ON audit_log (log_id, target_id, at, seq);
      CREATE INDEX idx_audit_log_at ON audit_log (at);
      ${grantToFirstKeys('audit:read')}`,
  },
];
