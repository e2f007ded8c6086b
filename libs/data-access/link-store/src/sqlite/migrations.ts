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
    // Ids of links deleted on this shard while it received them in a move: a copy read before
    // the delete must not bring them back (docs/design.md, "Online resharding").
    name: '003_move_tombstones',
    up: `CREATE TABLE link_move_tombstones (link_id INTEGER PRIMARY KEY, created_at INTEGER NOT NULL);`,
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
  {
    // The versioned shard ring, the app instances that route with it, the resharding tool's moves
    // (docs/design.md, "Online resharding"). Times in epoch ms.
    name: '002_shard_ring',
    up: `
      CREATE TABLE shard_ring_versions (version INTEGER PRIMARY KEY, spec TEXT NOT NULL, created_at INTEGER NOT NULL);
      CREATE TABLE shard_ring_watchers (instance_id TEXT PRIMARY KEY, app TEXT NOT NULL, version INTEGER NOT NULL, seen_at INTEGER NOT NULL);
      CREATE TABLE shard_moves (id TEXT PRIMARY KEY, progress TEXT NOT NULL, owner TEXT, owner_seen_at INTEGER, finished INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);`,
  },
];
