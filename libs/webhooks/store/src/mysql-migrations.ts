import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook endpoints (secrets sealed, docs/design.md "Webhooks") and their deliveries: one row per
 * message and endpoint, its id the `webhook-id`; due ones found by (status, next_attempt_at).
 */
export class Webhooks1734500000001 implements MigrationInterface {
  name = 'Webhooks1734500000001';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS webhooks (
        id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        url VARCHAR(2048) NOT NULL,
        events VARCHAR(255) CHARACTER SET ascii NOT NULL,
        description VARCHAR(1000) NOT NULL,
        enabled TINYINT(1) NOT NULL,
        disabled_reason VARCHAR(32) NULL,
        secret VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        previous_secret VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL,
        previous_secret_until DATETIME(3) NULL,
        failing_since DATETIME(3) NULL,
        created_at DATETIME(3) NOT NULL,
        updated_at DATETIME(3) NOT NULL,
        KEY idx_webhooks_tenant (tenant_id, created_at)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS webhook_deliveries (
        id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
        webhook_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        tenant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        event_type VARCHAR(32) CHARACTER SET ascii NOT NULL,
        payload MEDIUMTEXT NOT NULL,
        status VARCHAR(16) CHARACTER SET ascii NOT NULL,
        attempts INT UNSIGNED NOT NULL,
        last_error VARCHAR(500) NULL,
        last_status_code SMALLINT UNSIGNED NULL,
        next_attempt_at DATETIME(3) NULL,
        created_at DATETIME(3) NOT NULL,
        updated_at DATETIME(3) NOT NULL,
        KEY idx_webhook_deliveries_due (status, next_attempt_at),
        KEY idx_webhook_deliveries_webhook (webhook_id, created_at, id)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE webhook_deliveries');
    await q.query('DROP TABLE webhooks');
  }
}

/** The webhooks context's migrations of the MySQL meta database, in order (the meta database's whole list: @shortlink/wiring's metaMigrations). */
export const WEBHOOKS_MYSQL_MIGRATIONS = [Webhooks1734500000001];
