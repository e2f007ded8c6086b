import { MigrationInterface, QueryRunner } from 'typeorm';

// Codes are case-sensitive Base62: ascii_bin keeps "abc" and "ABC" distinct under the unique key.
export class CreateLinks1733130000000 implements MigrationInterface {
  name = 'CreateLinks1733130000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS links (
        id BIGINT UNSIGNED NOT NULL,
        domain VARCHAR(253) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
        code VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        target_url VARCHAR(2048) NOT NULL,
        tenant_id CHAR(36) CHARACTER SET ascii NOT NULL,
        created_at DATETIME(3) NOT NULL,
        expires_at DATETIME(3) NULL,
        status TINYINT UNSIGNED NOT NULL DEFAULT 1,
        redirect_type SMALLINT UNSIGNED NOT NULL DEFAULT 302,
        PRIMARY KEY (id),
        UNIQUE KEY uq_links_domain_code (domain, code),
        KEY idx_links_tenant (tenant_id, created_at)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE links');
  }
}

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
