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

/** A new scope for each tenant's first key, its oldest (audit:read, members:write), unless it has it; and taking it back. */
const grantToFirstKeys = (scope: string) => `
  UPDATE api_keys k
    JOIN (SELECT tenant_id, MIN(created_at) AS first_at FROM api_keys GROUP BY tenant_id) f ON f.tenant_id = k.tenant_id AND k.created_at = f.first_at
    SET k.scopes = CONCAT(k.scopes, ' ${scope}')
    WHERE CONCAT(' ', k.scopes, ' ') NOT LIKE '% ${scope} %'`;
const withdrawFromKeys = (scope: string) => `UPDATE api_keys SET scopes = TRIM(REPLACE(CONCAT(' ', scopes, ' '), ' ${scope} ', ' '))`;

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
 * A tenant's members and their server-side sessions (by the hash of the session id), and
 * `members:write` for each tenant's first key, its oldest (docs/design.md, "People and sessions").
 * Emails are stored lower-cased; their collation is binary so that the unique key compares what is stored.
 */
export class People1734300000001 implements MigrationInterface {
  name = 'People1734300000001';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS members (
        id CHAR(36) CHARACTER SET ascii NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(36) CHARACTER SET ascii NOT NULL,
        email VARCHAR(254) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
        role VARCHAR(16) CHARACTER SET ascii NOT NULL,
        status VARCHAR(16) CHARACTER SET ascii NOT NULL,
        password_hash VARCHAR(255) CHARACTER SET ascii NULL,
        invitation_hash CHAR(64) CHARACTER SET ascii NULL,
        invitation_expires_at DATETIME(3) NULL,
        created_at DATETIME(3) NOT NULL,
        updated_at DATETIME(3) NOT NULL,
        UNIQUE KEY uq_members_tenant_email (tenant_id, email),
        UNIQUE KEY uq_members_invitation (invitation_hash),
        KEY idx_members_email (email)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS member_sessions (
        id_hash CHAR(64) CHARACTER SET ascii NOT NULL PRIMARY KEY,
        member_id CHAR(36) CHARACTER SET ascii NOT NULL,
        tenant_id VARCHAR(36) CHARACTER SET ascii NOT NULL,
        created_at DATETIME(3) NOT NULL,
        last_seen_at DATETIME(3) NOT NULL,
        expires_at DATETIME(3) NOT NULL,
        KEY idx_member_sessions_member (member_id),
        KEY idx_member_sessions_expiry (expires_at)
      ) ENGINE=InnoDB`);
    await q.query(grantToFirstKeys('members:write'));
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE member_sessions');
    await q.query('DROP TABLE members');
    await q.query(withdrawFromKeys('members:write'));
  }
}

/**
 * A member's TOTP second factor (secrets sealed by the app, the last time step used against
 * replays) and its recovery codes as hashes, each deleted when used (docs/design.md, "People and sessions").
 */
export class SecondFactor1734300000002 implements MigrationInterface {
  name = 'SecondFactor1734300000002';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS member_second_factors (
        member_id CHAR(36) CHARACTER SET ascii NOT NULL PRIMARY KEY,
        secret VARCHAR(255) CHARACTER SET ascii NULL,
        pending VARCHAR(255) CHARACTER SET ascii NULL,
        last_step BIGINT NULL,
        updated_at DATETIME(3) NOT NULL
      ) ENGINE=InnoDB`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS member_recovery_codes (
        member_id CHAR(36) CHARACTER SET ascii NOT NULL,
        code_hash CHAR(64) CHARACTER SET ascii NOT NULL,
        PRIMARY KEY (member_id, code_hash)
      ) ENGINE=InnoDB`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE member_recovery_codes');
    await q.query('DROP TABLE member_second_factors');
  }
}

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

/**
 * A tenant's OpenID Connect provider for single sign-on: the client secret sealed by the app, the
 * allowed email domains as a JSON array (docs/design.md, "Single sign-on").
 */
export class Sso1734700000001 implements MigrationInterface {
  name = 'Sso1734700000001';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS tenant_sso (
        tenant_id VARCHAR(36) CHARACTER SET ascii NOT NULL PRIMARY KEY,
        issuer VARCHAR(2048) NOT NULL,
        client_id VARCHAR(255) NOT NULL,
        client_secret VARCHAR(2048) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        allowed_domains TEXT NOT NULL,
        default_role VARCHAR(16) CHARACTER SET ascii NOT NULL,
        created_at DATETIME(3) NOT NULL,
        updated_at DATETIME(3) NOT NULL
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE tenant_sso');
  }
}

/**
 * What a session's sign-in came from (device, browser, OS, approximate place), as JSON: shown to the
 * person among their sessions, never the address or the user agent (docs/design.md, "People and sessions").
 */
export class SessionClient1735250000001 implements MigrationInterface {
  name = 'SessionClient1735250000001';
  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE member_sessions ADD COLUMN client VARCHAR(1024) CHARACTER SET utf8mb4 NULL');
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE member_sessions DROP COLUMN client');
  }
}

/**
 * A key acts for a person (docs/design.md, "Security model"): the member it acts for, and the audit
 * log's columns naming that person beside the key (added at the end: instant on MariaDB and MySQL).
 * Key management is a scope of its own: keys that could manage keys before (links:write) get
 * keys:write, within their person's role at every use. Keys the audit log says a person made act
 * for that person (one removed since: suspended), and so do keys made by those keys, three links
 * deep; the rest act for no person.
 */
export class KeyPeople1735100000001 implements MigrationInterface {
  name = 'KeyPeople1735100000001';
  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE api_keys ADD COLUMN member_id CHAR(36) CHARACTER SET ascii NULL');
    await q.query(
      'ALTER TABLE audit_log ADD COLUMN on_behalf_of_id VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL, ADD COLUMN on_behalf_of_name VARCHAR(320) NULL',
    );
    await q.query('ALTER TABLE members ADD KEY idx_members_tenant_role (tenant_id, role, status)');
    await q.query(`
      UPDATE api_keys SET scopes = CONCAT(scopes, ' keys:write')
        WHERE CONCAT(' ', scopes, ' ') LIKE '% links:write %' AND CONCAT(' ', scopes, ' ') NOT LIKE '% keys:write %'`);
    await q.query(`
      UPDATE api_keys k JOIN audit_log a ON a.log_id = k.tenant_id AND a.target_id = k.id AND a.action = 'key.created' AND a.actor_type = 'person'
        SET k.member_id = a.actor_id WHERE k.member_id IS NULL`);
    for (let pass = 0; pass < 3; pass++)
      await q.query(`
        UPDATE api_keys k
          JOIN audit_log a ON a.log_id = k.tenant_id AND a.target_id = k.id AND a.action = 'key.created' AND a.actor_type = 'key'
          JOIN api_keys p ON p.id = a.actor_id AND p.tenant_id = k.tenant_id
          SET k.member_id = p.member_id WHERE k.member_id IS NULL AND p.member_id IS NOT NULL`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(withdrawFromKeys('keys:write'));
    await q.query('ALTER TABLE members DROP KEY idx_members_tenant_role');
    await q.query('ALTER TABLE audit_log DROP COLUMN on_behalf_of_id, DROP COLUMN on_behalf_of_name');
    await q.query('ALTER TABLE api_keys DROP COLUMN member_id');
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

/**
 * Conversions (docs/design.md, "Conversions"): each customer's first lead, the link its sales are
 * attributed to (first touch), and the invoice ids counted, so a retried sale counts once.
 */
export class Conversions1735400000001 implements MigrationInterface {
  name = 'Conversions1735400000001';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS conversion_customers (
        tenant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        customer_id VARCHAR(100) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
        link_id BIGINT UNSIGNED NOT NULL,
        domain VARCHAR(253) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
        code VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        click_id CHAR(22) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        created_at DATETIME(3) NOT NULL,
        PRIMARY KEY (tenant_id, customer_id)
      ) ENGINE=InnoDB`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS conversion_invoices (
        tenant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        invoice_id VARCHAR(100) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
        created_at DATETIME(3) NOT NULL,
        PRIMARY KEY (tenant_id, invoice_id)
      ) ENGINE=InnoDB`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE conversion_invoices');
    await q.query('DROP TABLE conversion_customers');
  }
}

/** Migrations of a shard database and of the meta database, in order. */
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
export const META_MIGRATIONS = [
  CreateMeta1733130000001,
  TenantKeysDomains1733400000000,
  BatchRequests1733500000000,
  ShardRing1733600000001,
  AuditLog1733800000001,
  DomainSettings1734190000001,
  People1734300000001,
  SecondFactor1734300000002,
  Webhooks1734500000001,
  Sso1734700000001,
  KeyPeople1735100000001,
  DomainOwnership1735200000001,
  SessionClient1735250000001,
  Safety1735300000001,
  Conversions1735400000001,
];
