/** The safety context's migrations of the SQLite meta database, in order (the meta database's whole list: @shortlink/wiring's metaMigrations). */
export const SAFETY_SQLITE_MIGRATIONS = [
  {
    // Trust and safety (docs/design.md, "Trust and safety"): the index of link targets by reversed
    // host and by URL, each target URL with what its checks found, visitors' reports (one per
    // visitor and link), the operators' queue, a tenant's choice for broken links, the feeds'
    // digests, the jobs' leases (feed and lease names by their sha256). Times in epoch ms.
    name: '014_safety',
    up: `
      CREATE TABLE safety_link_targets (
        link_id INTEGER NOT NULL, url_hash TEXT NOT NULL, domain TEXT NOT NULL, code TEXT NOT NULL, tenant_id TEXT NOT NULL, rhost TEXT NOT NULL,
        PRIMARY KEY (link_id, url_hash));
      CREATE INDEX idx_safety_link_targets_rhost ON safety_link_targets (rhost, link_id);
      CREATE INDEX idx_safety_link_targets_url ON safety_link_targets (url_hash, link_id);
      CREATE TABLE safety_targets (
        url_hash TEXT PRIMARY KEY, url TEXT NOT NULL, host TEXT NOT NULL, state INTEGER NOT NULL DEFAULT 0, since INTEGER,
        last_status INTEGER, last_error TEXT, checked_at INTEGER, failures INTEGER NOT NULL DEFAULT 0, next_check_at INTEGER NOT NULL);
      CREATE INDEX idx_safety_targets_due ON safety_targets (next_check_at, url_hash);
      CREATE TABLE abuse_reports (
        id TEXT PRIMARY KEY, link_id INTEGER NOT NULL, domain TEXT NOT NULL, code TEXT NOT NULL, tenant_id TEXT NOT NULL, reason TEXT NOT NULL,
        details TEXT, reporter TEXT NOT NULL, created_at INTEGER NOT NULL, relayed INTEGER NOT NULL DEFAULT 0);
      CREATE UNIQUE INDEX uq_abuse_reports_reporter ON abuse_reports (link_id, reporter);
      CREATE INDEX idx_abuse_reports_relay ON abuse_reports (relayed, created_at);
      CREATE INDEX idx_abuse_reports_link ON abuse_reports (link_id, created_at);
      CREATE TABLE moderation_queue (
        link_id INTEGER PRIMARY KEY, domain TEXT NOT NULL, code TEXT NOT NULL, tenant_id TEXT NOT NULL, state TEXT NOT NULL,
        reports INTEGER NOT NULL DEFAULT 0, last_report_at INTEGER, hit TEXT, opened_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, resolution TEXT);
      CREATE INDEX idx_moderation_queue_list ON moderation_queue (state, updated_at, link_id);
      CREATE TABLE tenant_safety_settings (tenant_id TEXT PRIMARY KEY, broken_links TEXT NOT NULL, version INTEGER NOT NULL, updated_at INTEGER NOT NULL);
      CREATE TABLE safety_feeds (name_hash TEXT PRIMARY KEY, name TEXT NOT NULL, digest TEXT NOT NULL, entries INTEGER NOT NULL, checked_at INTEGER NOT NULL);
      CREATE TABLE safety_leases (name_hash TEXT PRIMARY KEY, owner TEXT NOT NULL, lease_until INTEGER NOT NULL);`,
  },
];
