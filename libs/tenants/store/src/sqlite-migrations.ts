/** The tenants context's migrations of the SQLite meta database, in order (the meta database's whole list: @shortlink/wiring's metaMigrations). */
export const TENANTS_SQLITE_MIGRATIONS = [
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
    // What a domain's owner sets for its visitors: redirects, branding, robots, app files, as JSON
    // of what differs from the defaults, versioned (docs/design.md, "Domain settings").
    name: '005_domain_settings',
    up: `CREATE TABLE domain_settings (domain TEXT PRIMARY KEY, settings TEXT NOT NULL, version INTEGER NOT NULL, updated_at INTEGER NOT NULL);`,
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
];
