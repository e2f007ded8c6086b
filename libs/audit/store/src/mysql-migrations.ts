import { MigrationInterface, QueryRunner } from 'typeorm';
import { mysqlGrantToFirstKeys as grantToFirstKeys, mysqlWithdrawFromKeys as withdrawFromKeys } from '@shortlink/sql';

/**
 * The audit log: a tenant's (log_id = its id) or the operators' (log_id = 'operator'), newest first
 * by (at, seq), with the filters' indexes; and `audit:read` for each tenant's first key, its oldest
 * (docs/design.md, "Audit log"). Codes in target_id are case-sensitive (binary collation).
 */
export class AuditLog1733800000001 implements MigrationInterface {
  name = 'AuditLog1733800000001';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS audit_log (
        seq BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
        id CHAR(36) CHARACTER SET ascii NOT NULL,
        log_id VARCHAR(36) CHARACTER SET ascii NOT NULL,
        at DATETIME(3) NOT NULL,
        actor_type VARCHAR(16) CHARACTER SET ascii NOT NULL,
        actor_id VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
        actor_name VARCHAR(320) NOT NULL,
        action VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        target_type VARCHAR(16) CHARACTER SET ascii NOT NULL,
        target_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
        target_domain VARCHAR(253) NULL,
        client_address VARCHAR(64) CHARACTER SET ascii NULL,
        changes MEDIUMTEXT NULL,
        details MEDIUMTEXT NULL,
        PRIMARY KEY (seq),
        UNIQUE KEY uq_audit_log_id (id),
        KEY idx_audit_log_log (log_id, at, seq),
        KEY idx_audit_log_actor (log_id, actor_id, at, seq),
        KEY idx_audit_log_target (log_id, target_id, at, seq),
        KEY idx_audit_log_at (at)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`);
    await q.query(grantToFirstKeys('audit:read'));
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE audit_log');
    await q.query(withdrawFromKeys('audit:read'));
  }
}

/** The audit context's migrations of the MySQL meta database, in order (the meta database's whole list: @shortlink/wiring's metaMigrations). */
export const AUDIT_MYSQL_MIGRATIONS = [AuditLog1733800000001];
