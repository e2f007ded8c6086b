import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateMeta1733130000001 implements MigrationInterface {
  name = 'CreateMeta1733130000001';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS tenants (
        id CHAR(36) CHARACTER SET ascii NOT NULL PRIMARY KEY,
        name VARCHAR(200) NOT NULL,
        plan VARCHAR(16) NOT NULL,
        created_at DATETIME(3) NOT NULL
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS api_keys (
        key_hash CHAR(64) CHARACTER SET ascii NOT NULL PRIMARY KEY,
        tenant_id CHAR(36) CHARACTER SET ascii NOT NULL,
        created_at DATETIME(3) NOT NULL,
        KEY idx_api_keys_tenant (tenant_id),
        CONSTRAINT fk_api_keys_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      ) ENGINE=InnoDB`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS sequences (
        name VARCHAR(64) CHARACTER SET ascii NOT NULL PRIMARY KEY,
        next_id BIGINT UNSIGNED NOT NULL
      ) ENGINE=InnoDB`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE api_keys');
    await q.query('DROP TABLE tenants');
    await q.query('DROP TABLE sequences');
  }
}

/**
 * Tenant status; named, scoped, expiring, revocable keys (ids for the API, prefixes for lists);
 * tenants' own domains; the operators' domain block list (docs/design.md, "Tenants, keys and plans").
 */
export class TenantKeysDomains1733400000000 implements MigrationInterface {
  name = 'TenantKeysDomains1733400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query("ALTER TABLE tenants ADD COLUMN status VARCHAR(16) NOT NULL DEFAULT 'active'");
    await q.query(`
      ALTER TABLE api_keys
        ADD COLUMN id CHAR(36) CHARACTER SET ascii NULL,
        ADD COLUMN name VARCHAR(200) NOT NULL DEFAULT 'key',
        ADD COLUMN prefix VARCHAR(16) NOT NULL DEFAULT '',
        ADD COLUMN scopes VARCHAR(255) NOT NULL DEFAULT 'links:read links:write analytics:read',
        ADD COLUMN expires_at DATETIME(3) NULL,
        ADD COLUMN revoked_at DATETIME(3) NULL`);
    await q.query('UPDATE api_keys SET id = UUID() WHERE id IS NULL');
    await q.query('ALTER TABLE api_keys MODIFY COLUMN id CHAR(36) CHARACTER SET ascii NOT NULL, ADD UNIQUE KEY uq_api_keys_id (id)');
    await q.query(`
      CREATE TABLE IF NOT EXISTS tenant_domains (
        domain VARCHAR(253) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL PRIMARY KEY,
        tenant_id CHAR(36) CHARACTER SET ascii NOT NULL,
        created_at DATETIME(3) NOT NULL,
        KEY idx_tenant_domains_tenant (tenant_id),
        CONSTRAINT fk_tenant_domains_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      ) ENGINE=InnoDB`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS blocked_domains (
        domain VARCHAR(253) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL PRIMARY KEY,
        reason VARCHAR(500) NULL,
        created_at DATETIME(3) NOT NULL
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE blocked_domains');
    await q.query('DROP TABLE tenant_domains');
    await q.query(
      'ALTER TABLE api_keys DROP KEY uq_api_keys_id, DROP COLUMN id, DROP COLUMN name, DROP COLUMN prefix, DROP COLUMN scopes, DROP COLUMN expires_at, DROP COLUMN revoked_at',
    );
    await q.query('ALTER TABLE tenants DROP COLUMN status');
  }
}

/**
 * What a domain's owner sets for its visitors: redirects, branding, robots, app files, as JSON of
 * what differs from the defaults, versioned (docs/design.md, "Domain settings"). MEDIUMTEXT, not
 * JSON, for the reason given at LinkOptions1733300000000.
 */
export class DomainSettings1734190000001 implements MigrationInterface {
  name = 'DomainSettings1734190000001';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS domain_settings (
        domain VARCHAR(253) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL PRIMARY KEY,
        settings MEDIUMTEXT NOT NULL,
        version INT UNSIGNED NOT NULL,
        updated_at DATETIME(3) NOT NULL
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE domain_settings');
  }
}

/**
 * Tenants' own domains with the proof of their ownership (docs/design.md, "Custom domains and TLS"):
 * status, the HTTP token, the checks' schedule and the holder of a check in progress, the certificate
 * the TLS front served. Domains an operator gave stay verified, by the operator; the defaults make a
 * row an instance of the version before inserts (a rolling upgrade) one of those, with no token.
 */
export class DomainOwnership1735200000001 implements MigrationInterface {
  name = 'DomainOwnership1735200000001';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE tenant_domains
        ADD COLUMN status VARCHAR(16) CHARACTER SET ascii NOT NULL DEFAULT 'verified',
        ADD COLUMN token VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
        ADD COLUMN verified_by VARCHAR(16) CHARACTER SET ascii NULL DEFAULT 'operator',
        ADD COLUMN verified_at DATETIME(3) NULL,
        ADD COLUMN checked_at DATETIME(3) NULL,
        ADD COLUMN failures INT UNSIGNED NOT NULL DEFAULT 0,
        ADD COLUMN last_failure VARCHAR(500) NULL,
        ADD COLUMN next_check_at DATETIME(3) NULL,
        ADD COLUMN retry_until DATETIME(3) NULL,
        ADD COLUMN check_holder VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
        ADD COLUMN cert_expires_at DATETIME(3) NULL,
        ADD COLUMN cert_fingerprint VARCHAR(64) CHARACTER SET ascii NULL,
        ADD COLUMN cert_checked_at DATETIME(3) NULL,
        ADD COLUMN cert_error VARCHAR(500) NULL,
        ADD KEY idx_tenant_domains_due (next_check_at)`);
    await q.query('UPDATE tenant_domains SET verified_at = created_at WHERE verified_at IS NULL');
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE tenant_domains DROP KEY idx_tenant_domains_due, DROP COLUMN status, DROP COLUMN token, DROP COLUMN verified_by,
        DROP COLUMN verified_at, DROP COLUMN checked_at, DROP COLUMN failures, DROP COLUMN last_failure, DROP COLUMN next_check_at,
        DROP COLUMN retry_until, DROP COLUMN check_holder, DROP COLUMN cert_expires_at, DROP COLUMN cert_fingerprint,
        DROP COLUMN cert_checked_at, DROP COLUMN cert_error`);
  }
}

/** The tenants context's migrations of the MySQL meta database, in order (the meta database's whole list: @shortlink/wiring's metaMigrations). */
export const TENANTS_MYSQL_MIGRATIONS = [CreateMeta1733130000001, TenantKeysDomains1733400000000, DomainSettings1734190000001, DomainOwnership1735200000001];
