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
  {
    // Link options, versions and moderation; tags in their own table (filtering by tag reads an
    // index range); deleted codes kept out of use; listing by (tenant, id) (docs/design.md).
    name: '002_link_options',
    up: `
      ALTER TABLE links ADD COLUMN updated_at INTEGER;
      ALTER TABLE links ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
      ALTER TABLE links ADD COLUMN moderation INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE links ADD COLUMN title TEXT;
      ALTER TABLE links ADD COLUMN options TEXT;
      UPDATE links SET updated_at = created_at;
      DROP INDEX idx_links_tenant;
      CREATE INDEX idx_links_tenant_id ON links (tenant_id, id);
      CREATE INDEX idx_links_tenant_status_id ON links (tenant_id, status, id);
      CREATE INDEX idx_links_expiry ON links (status, expires_at) WHERE expires_at IS NOT NULL;
      CREATE TABLE link_tags (tenant_id TEXT NOT NULL, tag TEXT NOT NULL, link_id INTEGER NOT NULL, PRIMARY KEY (tenant_id, tag, link_id));
      CREATE INDEX idx_link_tags_link ON link_tags (link_id);
      CREATE TABLE retired_codes (domain TEXT NOT NULL, code TEXT NOT NULL, retired_until INTEGER NOT NULL, PRIMARY KEY (domain, code));`,
  },
  {
    // Redirects counted against maxClicks, flushed by the redirect: where a lost Redis counter is
    // found again (docs/design.md, "Max clicks"). A column, so it moves with its row.
    name: '003_click_count',
    up: `ALTER TABLE links ADD COLUMN click_count INTEGER NOT NULL DEFAULT 0;`,
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
