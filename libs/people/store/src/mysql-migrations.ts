import { MigrationInterface, QueryRunner } from 'typeorm';
import { mysqlGrantToFirstKeys as grantToFirstKeys, mysqlWithdrawFromKeys as withdrawFromKeys } from '@shortlink/sql';

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

/** The people context's migrations of the MySQL meta database, in order (the meta database's whole list: @shortlink/wiring's metaMigrations). */
export const PEOPLE_MYSQL_MIGRATIONS = [People1734300000001, SecondFactor1734300000002, Sso1734700000001, KeyPeople1735100000001, SessionClient1735250000001];
