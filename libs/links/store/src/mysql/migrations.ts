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

/**
 * Link options, versions and moderation; tags in their own table (filtering by tag reads an index
 * range); deleted codes kept out of use; listing by (tenant, id) (docs/design.md, "Listing").
 * Plain SQL that runs on MariaDB 10.11 and MySQL 8.4. Options are MEDIUMTEXT, not JSON: MariaDB's
 * JSON is text and MySQL's is parsed by the driver; text reads the same on both.
 */
export class LinkOptions1733300000000 implements MigrationInterface {
  name = 'LinkOptions1733300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE links
        ADD COLUMN updated_at DATETIME(3) NULL AFTER created_at,
        ADD COLUMN version INT UNSIGNED NOT NULL DEFAULT 1,
        ADD COLUMN moderation TINYINT UNSIGNED NOT NULL DEFAULT 0,
        ADD COLUMN title VARCHAR(200) NULL,
        ADD COLUMN options MEDIUMTEXT NULL,
        ADD KEY idx_links_tenant_id (tenant_id, id),
        ADD KEY idx_links_tenant_status_id (tenant_id, status, id),
        ADD KEY idx_links_expiry (status, expires_at),
        DROP KEY idx_links_tenant`);
    await q.query('UPDATE links SET updated_at = created_at WHERE updated_at IS NULL');
    await q.query(`
      CREATE TABLE IF NOT EXISTS link_tags (
        tenant_id CHAR(36) CHARACTER SET ascii NOT NULL,
        tag VARCHAR(50) NOT NULL,
        link_id BIGINT UNSIGNED NOT NULL,
        PRIMARY KEY (tenant_id, tag, link_id),
        KEY idx_link_tags_link (link_id)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS retired_codes (
        domain VARCHAR(253) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
        code VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        retired_until DATETIME(3) NOT NULL,
        PRIMARY KEY (domain, code)
      ) ENGINE=InnoDB`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE retired_codes');
    await q.query('DROP TABLE link_tags');
    await q.query(
      'ALTER TABLE links DROP COLUMN updated_at, DROP COLUMN version, DROP COLUMN moderation, DROP COLUMN title, DROP COLUMN options, ADD KEY idx_links_tenant (tenant_id, created_at), DROP KEY idx_links_tenant_id, DROP KEY idx_links_tenant_status_id, DROP KEY idx_links_expiry',
    );
  }
}

/**
 * Redirects counted against maxClicks, flushed by the redirect: where a lost Redis counter is found
 * again (docs/design.md, "Max clicks"). A move carries it to the new owner after the switch.
 */
export class LinkClickCount1733400000000 implements MigrationInterface {
  name = 'LinkClickCount1733400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE links ADD COLUMN click_count BIGINT UNSIGNED NOT NULL DEFAULT 0');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE links DROP COLUMN click_count');
  }
}

/**
 * The listing is newest first by creation time, then id (ids of a batch or an import are not in
 * creation order): (tenant, created_at, id) replaces (tenant, id), with and without the status
 * (docs/design.md, "Listing"). Online index changes on InnoDB.
 */
export class LinkListOrder1733700000000 implements MigrationInterface {
  name = 'LinkListOrder1733700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE links
        ADD KEY idx_links_tenant_created (tenant_id, created_at, id),
        ADD KEY idx_links_tenant_status_created (tenant_id, status, created_at, id),
        DROP KEY idx_links_tenant_id,
        DROP KEY idx_links_tenant_status_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE links
        ADD KEY idx_links_tenant_id (tenant_id, id),
        ADD KEY idx_links_tenant_status_id (tenant_id, status, id),
        DROP KEY idx_links_tenant_created,
        DROP KEY idx_links_tenant_status_created`);
  }
}

/**
 * Idempotency records of batch creation: the claim with its lease, then per chunk its hash,
 * reserved ids, quota and (once written) its answer, compressed (docs/design.md, "Batch creation").
 */
export class BatchRequests1733500000000 implements MigrationInterface {
  name = 'BatchRequests1733500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS batch_requests (
        tenant_id CHAR(36) CHARACTER SET ascii NOT NULL,
        idem_key VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        chunk_rows INT UNSIGNED NOT NULL,
        owner CHAR(36) CHARACTER SET ascii NULL,
        lease_until DATETIME(3) NULL,
        complete TINYINT UNSIGNED NOT NULL DEFAULT 0,
        total_rows INT UNSIGNED NULL,
        created_at DATETIME(3) NOT NULL,
        expires_at DATETIME(3) NOT NULL,
        PRIMARY KEY (tenant_id, idem_key),
        KEY idx_batch_requests_expiry (expires_at)
      ) ENGINE=InnoDB`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS batch_chunks (
        tenant_id CHAR(36) CHARACTER SET ascii NOT NULL,
        idem_key VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        seq INT UNSIGNED NOT NULL,
        row_hash CHAR(64) CHARACTER SET ascii NOT NULL,
        first_id BIGINT UNSIGNED NOT NULL,
        id_count INT UNSIGNED NOT NULL,
        granted INT UNSIGNED NOT NULL,
        created_at DATETIME(3) NOT NULL,
        results MEDIUMBLOB NULL,
        PRIMARY KEY (tenant_id, idem_key, seq)
      ) ENGINE=InnoDB`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE batch_chunks');
    await q.query('DROP TABLE batch_requests');
  }
}

/**
 * Ids of links deleted on this shard while it received them in a move: a copy read before the
 * delete must not bring them back (docs/design.md, "Online resharding").
 */
export class MoveTombstones1733600000000 implements MigrationInterface {
  name = 'MoveTombstones1733600000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE TABLE IF NOT EXISTS link_move_tombstones (link_id BIGINT UNSIGNED NOT NULL PRIMARY KEY, created_at DATETIME(3) NOT NULL) ENGINE=InnoDB',
    );
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE link_move_tombstones');
  }
}

/**
 * The versioned shard ring, the app instances that route with it (their reports, by the server's
 * clock) and the resharding tool's moves (docs/design.md, "Online resharding").
 */
export class ShardRing1733600000001 implements MigrationInterface {
  name = 'ShardRing1733600000001';
  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE TABLE IF NOT EXISTS shard_ring_versions (version INT UNSIGNED NOT NULL PRIMARY KEY, spec MEDIUMTEXT NOT NULL, created_at DATETIME(3) NOT NULL) ENGINE=InnoDB',
    );
    await q.query(`
      CREATE TABLE IF NOT EXISTS shard_ring_watchers (
        instance_id VARCHAR(128) CHARACTER SET ascii NOT NULL PRIMARY KEY,
        app VARCHAR(64) NOT NULL,
        version INT UNSIGNED NOT NULL,
        seen_at DATETIME(3) NOT NULL,
        KEY idx_shard_ring_watchers_seen (seen_at)
      ) ENGINE=InnoDB`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS shard_moves (
        id CHAR(36) CHARACTER SET ascii NOT NULL PRIMARY KEY,
        progress MEDIUMTEXT NOT NULL,
        owner VARCHAR(128) NULL,
        owner_seen_at DATETIME(3) NULL,
        finished TINYINT UNSIGNED NOT NULL DEFAULT 0,
        created_at DATETIME(3) NOT NULL,
        updated_at DATETIME(3) NOT NULL,
        KEY idx_shard_moves_latest (finished, created_at)
      ) ENGINE=InnoDB`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE shard_moves');
    await q.query('DROP TABLE shard_ring_watchers');
    await q.query('DROP TABLE shard_ring_versions');
  }
}

/**
 * Links a domain's robots.txt lets crawlers fetch (docs/design.md, "Domain settings"): the few
 * crawlable codes of a domain are one range of (crawlable, domain, code).
 */
export class LinkCrawlable1734190000000 implements MigrationInterface {
  name = 'LinkCrawlable1734190000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE links ADD COLUMN crawlable TINYINT UNSIGNED NOT NULL DEFAULT 0, ADD KEY idx_links_crawlable (crawlable, domain, code)');
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE links DROP KEY idx_links_crawlable, DROP COLUMN crawlable');
  }
}

/**
 * Ids of links whose click count a move added here from their old owner: a resumed move adds
 * nothing twice (docs/design.md, "Online resharding"). Cleared with the tombstones.
 */
export class MoveClickCarries1733800000000 implements MigrationInterface {
  name = 'MoveClickCarries1733800000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE TABLE IF NOT EXISTS link_move_carries (link_id BIGINT UNSIGNED NOT NULL PRIMARY KEY, clicks BIGINT UNSIGNED NOT NULL, created_at DATETIME(3) NOT NULL) ENGINE=InnoDB',
    );
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE link_move_carries');
  }
}

/**
 * The move journal: ids of moving links written on this shard (their deciding one) while a move
 * runs, each entered in the transaction of its write, so that the frozen step of a move compares
 * only the links written since `verify` began (docs/design.md, "Online resharding"). Emptied when
 * verify begins and when the move ends.
 */
export class MoveJournal1734900000000 implements MigrationInterface {
  name = 'MoveJournal1734900000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS link_move_journal (
        link_id BIGINT UNSIGNED NOT NULL PRIMARY KEY,
        domain VARCHAR(253) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
        code VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL
      ) ENGINE=InnoDB`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE link_move_journal');
  }
}

/**
 * The outbox: each link change's event, written in the change's transaction, relayed after the
 * commit and deleted once delivered; leased to one relay at a time, by the relay's clock in epoch
 * milliseconds (docs/design.md, "Edits reach every instance"). Ids only grow: InnoDB keeps the
 * AUTO_INCREMENT counter across restarts (MySQL 8.0, MariaDB 10.2.4 and later).
 */
export class LinkEvents1735031000000 implements MigrationInterface {
  name = 'LinkEvents1735031000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS link_events (
        id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
        kind VARCHAR(32) CHARACTER SET ascii NOT NULL,
        link_id BIGINT UNSIGNED NOT NULL,
        tenant_id CHAR(36) CHARACTER SET ascii NOT NULL,
        domain VARCHAR(253) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
        code VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        version INT UNSIGNED NOT NULL,
        occurred_at DATETIME(3) NOT NULL,
        lease_owner VARCHAR(128) CHARACTER SET ascii NOT NULL DEFAULT '',
        lease_until BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (id),
        KEY idx_link_events_owner (lease_owner, id),
        KEY idx_link_events_lease (lease_until, id)
      ) ENGINE=InnoDB`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE link_events');
  }
}

/**
 * What the dead-link checks found of a link (docs/design.md, "Trust and safety"): its state (0 never
 * checked, 1 ok, 2 broken) in a column of its own for the list filter's index, the rest as JSON.
 */
export class LinkHealth1735300000000 implements MigrationInterface {
  name = 'LinkHealth1735300000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'ALTER TABLE links ADD COLUMN health TINYINT UNSIGNED NOT NULL DEFAULT 0, ADD COLUMN health_detail TEXT NULL, ADD KEY idx_links_tenant_health_created (tenant_id, health, created_at, id)',
    );
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE links DROP KEY idx_links_tenant_health_created, DROP COLUMN health_detail, DROP COLUMN health');
  }
}

/** Migrations of a shard database, in order. */
export const SHARD_MIGRATIONS = [
  CreateLinks1733130000000,
  LinkOptions1733300000000,
  LinkClickCount1733400000000,
  MoveTombstones1733600000000,
  LinkListOrder1733700000000,
  MoveClickCarries1733800000000,
  LinkCrawlable1734190000000,
  MoveJournal1734900000000,
  LinkEvents1735031000000,
  LinkHealth1735300000000,
];
/** The links context's migrations of the meta database (batch records, the shard ring), in order; the meta database's whole list is @shortlink/wiring's metaMigrations. */
export const LINKS_MYSQL_MIGRATIONS = [BatchRequests1733500000000, ShardRing1733600000001];
