export const SQLITE_SHARD_MIGRATIONS = [
  {
    name: '001_links',
    up: `
      CREATE TABLE links (
        id INTEGER PRIMARY KEY,
        domain TEXT NOT NULL,
        code TEXT NOT NULL,
        target_url TEXT NOT NULL,
        tenant_id TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        status INTEGER NOT NULL DEFAULT 1,
        redirect_type INTEGER NOT NULL DEFAULT 302
      );
      CREATE UNIQUE INDEX uq_links_domain_code ON links (domain, code);
      CREATE INDEX idx_links_tenant ON links (tenant_id, created_at);`,
  },
];

export const SQLITE_META_MIGRATIONS = [
  {
    name: '001_tenants_keys_sequences',
    up: `
      CREATE TABLE tenants (id TEXT PRIMARY KEY, name TEXT NOT NULL, plan TEXT NOT NULL, created_at INTEGER NOT NULL);
      CREATE TABLE api_keys (key_hash TEXT PRIMARY KEY, tenant_id TEXT NOT NULL REFERENCES tenants(id), created_at INTEGER NOT NULL);
      CREATE TABLE sequences (name TEXT PRIMARY KEY, next_id INTEGER NOT NULL);`,
  },
];
