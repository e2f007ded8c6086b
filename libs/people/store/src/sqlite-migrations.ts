import { sqliteGrantToFirstKeys as grantToFirstKeys } from '@shortlink/sql';

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

/** The people context's migrations of the SQLite meta database, in order (the meta database's whole list: @shortlink/wiring's metaMigrations). */
export const PEOPLE_SQLITE_MIGRATIONS = [
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
    // What a session's sign-in came from (device, browser, OS, approximate place), as JSON: shown to
    // the person among their sessions, never the address or the user agent (docs/design.md, "People and sessions").
    name: '013_session_client',
    up: `ALTER TABLE member_sessions ADD COLUMN client TEXT;`,
  },
];
