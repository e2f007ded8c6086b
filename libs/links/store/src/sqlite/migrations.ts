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

/** A new scope for each tenant's first key, its oldest (audit:read, members:write), unless it has it. */
const grantToFirstKeys = (scope: string) => `
      UPDATE api_keys SET scopes = scopes || ' ${scope}'
        WHERE instr(' ' || scopes || ' ', ' ${scope} ') = 0
          AND created_at = (SELECT MIN(k.created_at) FROM api_keys k WHERE k.tenant_id = api_keys.tenant_id);`;

/** Keys made by a person, by the audit log's `key.created`, then keys made by such keys (a pass per link of the chain). */
const attributeKeys = [
  `UPDATE api_keys SET member_id = (SELECT a.actor_id FROM audit_log a WHERE a.log_id = api_keys.tenant_id AND a.target_id = api_keys.id
     AND a.action = 'key.created' AND a.actor_type = 'person' LIMIT 1) WHERE member_id IS NULL;`,
  ...Array.from(
    { length: 3 },
    () => `UPDATE api_keys SET member_id = (SELECT p.member_id FROM audit_log a JOIN api_keys p ON p.id = a.actor_id AND p.tenant_id = a.log_id
     WHERE a.log_id = api_keys.tenant_id AND a.target_id = api_keys.id AND a.action = 'key.created' AND a.actor_type = 'key' LIMIT 1) WHERE member_id IS NULL;`,
  ),
].join('\n      ');

export const SQLITE_META_MIGRATIONS = [
  {
    name: '001_tenants_keys_sequences',
    up: `
      CREATE TABLE tenants (id TEXT PRIMARY KEY, name TEXT NOT NULL, plan TEXT NOT NULL, created_at INTEGER NOT NULL);
      CREATE TABLE api_keys (key_hash TEXT PRIMARY KEY, tenant_id TEXT NOT NULL REFERENCES tenants(id), created_at INTEGER NOT NULL);
      CREATE TABLE sequences (name TEXT PRIMARY KEY, next_id INTEGER NOT NULL);`,
  },
  {
    // Tenant status; named, scoped, expiring, revocable keys (ids for the API, prefixes for lists);
    // tenants' own domains; the operators' domain block list (docs/design.md, "Tenants, keys and plans").
    name: '002_tenant_status_keys_domains',
    up: `
      ALTER TABLE tenants ADD COLUMN status TEXT NOT NULL DEFAULT 'active';
      ALTER TABLE api_keys ADD COLUMN id TEXT;
      ALTER TABLE api_keys ADD COLUMN name TEXT NOT NULL DEFAULT 'key';
      ALTER TABLE api_keys ADD COLUMN prefix TEXT NOT NULL DEFAULT '';
      ALTER TABLE api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT 'links:read links:write analytics:read';
      ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;
      ALTER TABLE api_keys ADD COLUMN revoked_at INTEGER;
      UPDATE api_keys SET id = lower(hex(randomblob(16))) WHERE id IS NULL;
      CREATE UNIQUE INDEX uq_api_keys_id ON api_keys (id);
      CREATE INDEX idx_api_keys_tenant ON api_keys (tenant_id);
      CREATE TABLE tenant_domains (domain TEXT PRIMARY KEY, tenant_id TEXT NOT NULL REFERENCES tenants(id), created_at INTEGER NOT NULL);
      CREATE INDEX idx_tenant_domains_tenant ON tenant_domains (tenant_id);
      CREATE TABLE blocked_domains (domain TEXT PRIMARY KEY, reason TEXT, created_at INTEGER NOT NULL);`,
  },
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
  {
    // What a domain's owner sets for its visitors: redirects, branding, robots, app files, as JSON
    // of what differs from the defaults, versioned (docs/design.md, "Domain settings").
    name: '005_domain_settings',
    up: `CREATE TABLE domain_settings (domain TEXT PRIMARY KEY, settings TEXT NOT NULL, version INTEGER NOT NULL, updated_at INTEGER NOT NULL);`,
  },
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
  {
    // A tenant's members and their server-side sessions (by the hash of the session id), and
    // `members:write` for each tenant's first key, its oldest (docs/design.md, "People and sessions").
    name: '007_people',
    up: `
      CREATE TABLE members (
        id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL REFERENCES tenants(id), email TEXT NOT NULL, role TEXT NOT NULL, status TEXT NOT NULL,
        password_hash TEXT, invitation_hash TEXT, invitation_expires_at INTEGER, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
      CREATE UNIQUE INDEX uq_members_tenant_email ON members (tenant_id, email);
      CREATE UNIQUE INDEX uq_members_invitation ON members (invitation_hash);
      CREATE INDEX idx_members_email ON members (email);
      CREATE TABLE member_sessions (
        id_hash TEXT PRIMARY KEY, member_id TEXT NOT NULL, tenant_id TEXT NOT NULL,
        created_at INTEGER NOT NULL, last_seen_at INTEGER NOT NULL, expires_at INTEGER NOT NULL);
      CREATE INDEX idx_member_sessions_member ON member_sessions (member_id);
      CREATE INDEX idx_member_sessions_expiry ON member_sessions (expires_at);
      ${grantToFirstKeys('members:write')}`,
  },
  {
    // A member's TOTP second factor (secrets sealed by the app, the last time step used against
    // replays) and its recovery codes as hashes, each deleted when used (docs/design.md, "People and sessions").
    name: '008_second_factor',
    up: `
      CREATE TABLE member_second_factors (member_id TEXT PRIMARY KEY, secret TEXT, pending TEXT, last_step INTEGER, updated_at INTEGER NOT NULL);
      CREATE TABLE member_recovery_codes (member_id TEXT NOT NULL, code_hash TEXT NOT NULL, PRIMARY KEY (member_id, code_hash));`,
  },
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
  {
    // A tenant's OpenID Connect provider for single sign-on: the client secret sealed by the app,
    // the allowed email domains as a JSON array (docs/design.md, "Single sign-on").
    name: '010_sso',
    up: `
      CREATE TABLE tenant_sso (
        tenant_id TEXT PRIMARY KEY REFERENCES tenants(id), issuer TEXT NOT NULL, client_id TEXT NOT NULL, client_secret TEXT NOT NULL,
        allowed_domains TEXT NOT NULL, default_role TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);`,
  },
  {
    // A key acts for a person (docs/design.md, "Security model"): the member it acts for, and the
    // audit log's column naming that person beside the key. Key management is a scope of its own:
    // keys that could manage keys before (links:write) get keys:write, within their person's role
    // at every use. Keys the audit log says a person made act for that person (one removed since:
    // suspended), and so do keys made by those keys, three links deep; the rest act for no person.
    name: '011_key_people',
    up: `
      ALTER TABLE api_keys ADD COLUMN member_id TEXT;
      ALTER TABLE audit_log ADD COLUMN on_behalf_of_id TEXT;
      ALTER TABLE audit_log ADD COLUMN on_behalf_of_name TEXT;
      CREATE INDEX idx_members_tenant_role ON members (tenant_id, role, status);
      UPDATE api_keys SET scopes = scopes || ' keys:write'
        WHERE instr(' ' || scopes || ' ', ' links:write ') > 0 AND instr(' ' || scopes || ' ', ' keys:write ') = 0;
      ${attributeKeys}`,
  },
  {
    // Tenants' own domains with the proof of their ownership (docs/design.md, "Custom domains and TLS"):
    // status, the HTTP token, the checks' schedule and the holder of a check in progress, the certificate
    // the TLS front served. Domains an operator gave stay verified, by the operator. Times in epoch ms.
    name: '012_domain_ownership',
    up: `
      ALTER TABLE tenant_domains ADD COLUMN status TEXT NOT NULL DEFAULT 'verified';
      ALTER TABLE tenant_domains ADD COLUMN token TEXT;
      ALTER TABLE tenant_domains ADD COLUMN verified_by TEXT DEFAULT 'operator';
      ALTER TABLE tenant_domains ADD COLUMN verified_at INTEGER;
      ALTER TABLE tenant_domains ADD COLUMN checked_at INTEGER;
      ALTER TABLE tenant_domains ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE tenant_domains ADD COLUMN last_failure TEXT;
      ALTER TABLE tenant_domains ADD COLUMN next_check_at INTEGER;
      ALTER TABLE tenant_domains ADD COLUMN retry_until INTEGER;
      ALTER TABLE tenant_domains ADD COLUMN check_holder TEXT;
      ALTER TABLE tenant_domains ADD COLUMN cert_expires_at INTEGER;
      ALTER TABLE tenant_domains ADD COLUMN cert_fingerprint TEXT;
      ALTER TABLE tenant_domains ADD COLUMN cert_checked_at INTEGER;
      ALTER TABLE tenant_domains ADD COLUMN cert_error TEXT;
      UPDATE tenant_domains SET verified_at = created_at;
      CREATE INDEX idx_tenant_domains_due ON tenant_domains (next_check_at) WHERE next_check_at IS NOT NULL;`,
  },
  {
    // What a session's sign-in came from (device, browser, OS, approximate place), as JSON: shown to
    // the person among their sessions, never the address or the user agent (docs/design.md, "People and sessions").
    name: '013_session_client',
    up: `ALTER TABLE member_sessions ADD COLUMN client TEXT;`,
  },
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
  {
    // Conversions (docs/design.md, "Conversions"): each customer's first lead (the link its sales go
    // to) and the invoice ids counted. Times in epoch ms.
    name: '015_conversions',
    up: `
      CREATE TABLE conversion_customers (
        tenant_id TEXT NOT NULL, customer_id TEXT NOT NULL, link_id INTEGER NOT NULL, domain TEXT NOT NULL, code TEXT NOT NULL,
        click_id TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (tenant_id, customer_id));
      CREATE TABLE conversion_invoices (tenant_id TEXT NOT NULL, invoice_id TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (tenant_id, invoice_id));`,
  },
];
