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
    // found again (docs/design.md, "Max clicks"). A move carries it to the new owner after the switch.
    name: '003_click_count',
    up: `ALTER TABLE links ADD COLUMN click_count INTEGER NOT NULL DEFAULT 0;`,
  },
  {
    // Ids of links deleted on this shard while it received them in a move: a copy read before
    // the delete must not bring them back (docs/design.md, "Online resharding").
    name: '004_move_tombstones',
    up: `CREATE TABLE link_move_tombstones (link_id INTEGER PRIMARY KEY, created_at INTEGER NOT NULL);`,
  },
  {
    // The listing is newest first by creation time, then id (ids of a batch or an import are not
    // in creation order): (tenant, created_at, id) replaces (tenant, id) (docs/design.md, "Listing").
    name: '005_list_order',
    up: `
      CREATE INDEX idx_links_tenant_created ON links (tenant_id, created_at, id);
      CREATE INDEX idx_links_tenant_status_created ON links (tenant_id, status, created_at, id);
      DROP INDEX idx_links_tenant_id;
      DROP INDEX idx_links_tenant_status_id;`,
  },
  {
    // Links a domain's robots.txt lets crawlers fetch (docs/design.md, "Domain settings"): a column
    // with a partial index, so that the few crawlable codes of a domain are one index range.
    name: '006_crawlable',
    up: `
      ALTER TABLE links ADD COLUMN crawlable INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX idx_links_crawlable ON links (domain, code) WHERE crawlable = 1;`,
  },
  {
    // Ids of links whose click count a move added here from their old owner: a resumed move adds
    // nothing twice (docs/design.md, "Online resharding"). Cleared with the tombstones.
    name: '007_move_carries',
    up: `CREATE TABLE link_move_carries (link_id INTEGER PRIMARY KEY, clicks INTEGER NOT NULL, created_at INTEGER NOT NULL);`,
  },
  {
    // The move journal: ids of moving links written on this shard (their deciding one) while a move
    // runs, each entered in the transaction of its write, so that the frozen step compares only the
    // links written since verify began (docs/design.md, "Online resharding").
    name: '008_move_journal',
    up: `CREATE TABLE link_move_journal (link_id INTEGER PRIMARY KEY, domain TEXT NOT NULL, code TEXT NOT NULL);`,
  },
  {
    // The outbox: each link change's event, written in the change's transaction, relayed after the
    // commit and deleted once delivered; leased to one relay at a time (docs/design.md, "Edits
    // reach every instance").
    name: '009_link_events',
    up: `
      CREATE TABLE link_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        link_id INTEGER NOT NULL,
        tenant_id TEXT NOT NULL,
        domain TEXT NOT NULL,
        code TEXT NOT NULL,
        version INTEGER NOT NULL,
        occurred_at INTEGER NOT NULL,
        lease_owner TEXT NOT NULL DEFAULT '',
        lease_until INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX idx_link_events_owner ON link_events (lease_owner, id);
      CREATE INDEX idx_link_events_lease ON link_events (lease_until, id);`,
  },
  {
    // What the dead-link checks found of a link (docs/design.md, "Trust and safety"): its state (0
    // never checked, 1 ok, 2 broken) in a column of its own for the list filter's index, the rest as JSON.
    name: '010_link_health',
    up: `
      ALTER TABLE links ADD COLUMN health INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE links ADD COLUMN health_detail TEXT;
      CREATE INDEX idx_links_tenant_health_created ON links (tenant_id, health, created_at, id);`,
  },
];

/** The links context's migrations of the meta database (batch records, the shard ring), in order; the meta database's whole list is @shortlink/wiring's metaMigrations. */
export const LINKS_SQLITE_MIGRATIONS = [
  {
    // Idempotency records of batch creation: the claim with its lease, then per chunk its hash,
    // reserved ids, quota and (once written) its answer (docs/design.md, "Batch creation").
    name: '003_batch_requests',
    up: `
      CREATE TABLE batch_requests (
        tenant_id TEXT NOT NULL, idem_key TEXT NOT NULL, chunk_rows INTEGER NOT NULL, owner TEXT, lease_until INTEGER,
        complete INTEGER NOT NULL DEFAULT 0, total_rows INTEGER, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, idem_key));
      CREATE INDEX idx_batch_requests_expiry ON batch_requests (expires_at);
      CREATE TABLE batch_chunks (
        tenant_id TEXT NOT NULL, idem_key TEXT NOT NULL, seq INTEGER NOT NULL, row_hash TEXT NOT NULL, first_id INTEGER NOT NULL,
        id_count INTEGER NOT NULL, granted INTEGER NOT NULL, created_at INTEGER NOT NULL, results BLOB,
        PRIMARY KEY (tenant_id, idem_key, seq));`,
  },
  {
    // The versioned shard ring, the app instances that route with it, the resharding tool's moves
    // (docs/design.md, "Online resharding"). Times in epoch ms.
    name: '004_shard_ring',
    up: `
      CREATE TABLE shard_ring_versions (version INTEGER PRIMARY KEY, spec TEXT NOT NULL, created_at INTEGER NOT NULL);
      CREATE TABLE shard_ring_watchers (instance_id TEXT PRIMARY KEY, app TEXT NOT NULL, version INTEGER NOT NULL, seen_at INTEGER NOT NULL);
      CREATE TABLE shard_moves (id TEXT PRIMARY KEY, progress TEXT NOT NULL, owner TEXT, owner_seen_at INTEGER, finished INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);`,
  },
];
