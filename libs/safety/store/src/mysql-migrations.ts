import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Trust and safety (docs/design.md, "Trust and safety"): the index of link targets by host (the
 * reversed host, so that a host and its subdomains are one range) and by URL; each target URL once,
 * with what its checks found and when it is due; visitors' reports (one per visitor and link); the
 * operators' queue; a tenant's choice for visitors of broken links; the digest each feed's live
 * links were checked against; the leases of the jobs one instance runs at a time. Feed and lease
 * names are kept by their sha256 (a feed's name is its location, an URL of any length).
 */
export class Safety1735300000001 implements MigrationInterface {
  name = 'Safety1735300000001';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS safety_link_targets (
        link_id BIGINT UNSIGNED NOT NULL,
        url_hash CHAR(32) CHARACTER SET ascii NOT NULL,
        domain VARCHAR(253) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
        code VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        tenant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        rhost VARCHAR(253) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        PRIMARY KEY (link_id, url_hash),
        KEY idx_safety_link_targets_rhost (rhost, link_id),
        KEY idx_safety_link_targets_url (url_hash, link_id)
      ) ENGINE=InnoDB`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS safety_targets (
        url_hash CHAR(32) CHARACTER SET ascii NOT NULL PRIMARY KEY,
        url VARCHAR(2048) NOT NULL,
        host VARCHAR(253) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        state TINYINT UNSIGNED NOT NULL DEFAULT 0,
        since DATETIME(3) NULL,
        last_status SMALLINT UNSIGNED NULL,
        last_error VARCHAR(64) CHARACTER SET ascii NULL,
        checked_at DATETIME(3) NULL,
        failures INT UNSIGNED NOT NULL DEFAULT 0,
        next_check_at DATETIME(3) NOT NULL,
        KEY idx_safety_targets_due (next_check_at, url_hash)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS abuse_reports (
        id CHAR(36) CHARACTER SET ascii NOT NULL PRIMARY KEY,
        link_id BIGINT UNSIGNED NOT NULL,
        domain VARCHAR(253) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
        code VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        tenant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        reason VARCHAR(16) CHARACTER SET ascii NOT NULL,
        details TEXT NULL,
        reporter CHAR(32) CHARACTER SET ascii NOT NULL,
        created_at DATETIME(3) NOT NULL,
        relayed TINYINT UNSIGNED NOT NULL DEFAULT 0,
        UNIQUE KEY uq_abuse_reports_reporter (link_id, reporter),
        KEY idx_abuse_reports_relay (relayed, created_at),
        KEY idx_abuse_reports_link (link_id, created_at)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS moderation_queue (
        link_id BIGINT UNSIGNED NOT NULL PRIMARY KEY,
        domain VARCHAR(253) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
        code VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        tenant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        state VARCHAR(8) CHARACTER SET ascii NOT NULL,
        reports INT UNSIGNED NOT NULL DEFAULT 0,
        last_report_at DATETIME(3) NULL,
        hit TEXT NULL,
        opened_at DATETIME(3) NOT NULL,
        updated_at DATETIME(3) NOT NULL,
        resolution TEXT NULL,
        KEY idx_moderation_queue_list (state, updated_at, link_id)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS tenant_safety_settings (
        tenant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
        broken_links TEXT NOT NULL,
        version INT UNSIGNED NOT NULL,
        updated_at DATETIME(3) NOT NULL
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS safety_feeds (
        name_hash CHAR(64) CHARACTER SET ascii NOT NULL PRIMARY KEY,
        name TEXT NOT NULL,
        digest CHAR(64) CHARACTER SET ascii NOT NULL,
        entries INT UNSIGNED NOT NULL,
        checked_at DATETIME(3) NOT NULL
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS safety_leases (
        name_hash CHAR(64) CHARACTER SET ascii NOT NULL PRIMARY KEY,
        owner VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        lease_until DATETIME(3) NOT NULL
      ) ENGINE=InnoDB`);
  }
  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'safety_leases',
      'safety_feeds',
      'tenant_safety_settings',
      'moderation_queue',
      'abuse_reports',
      'safety_targets',
      'safety_link_targets',
    ])
      await q.query(`DROP TABLE ${table}`);
  }
}

/** The safety context's migrations of the MySQL meta database, in order (the meta database's whole list: @shortlink/wiring's metaMigrations). */
export const SAFETY_MYSQL_MIGRATIONS = [Safety1735300000001];
