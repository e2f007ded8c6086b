import { MigrationInterface, QueryRunner } from 'typeorm';

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

/**
 * The Stripe receiver (docs/stripe.md): each tenant's webhook signing secret, sealed, and the Stripe
 * customers a checkout linked to one of the tenant's customers (their invoices go to that customer's link).
 */
export class StripeReceiver1735400000002 implements MigrationInterface {
  name = 'StripeReceiver1735400000002';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS stripe_settings (
        tenant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        sealed_secret VARCHAR(1024) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        secret_hint VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        created_at DATETIME(3) NOT NULL,
        updated_at DATETIME(3) NOT NULL,
        PRIMARY KEY (tenant_id)
      ) ENGINE=InnoDB`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS stripe_customers (
        tenant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        stripe_customer_id VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        customer_id VARCHAR(100) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
        PRIMARY KEY (tenant_id, stripe_customer_id)
      ) ENGINE=InnoDB`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE stripe_customers');
    await q.query('DROP TABLE stripe_settings');
  }
}

/** Each tenant's conversion settings (docs/analytics.md, "Conversions"): its attribution model, `first` or `last`. */
export class ConversionSettings1735400000003 implements MigrationInterface {
  name = 'ConversionSettings1735400000003';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS conversion_settings (
        tenant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        attribution VARCHAR(8) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        PRIMARY KEY (tenant_id)
      ) ENGINE=InnoDB`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE conversion_settings');
  }
}

/** Conversion tracking on tags (docs/design.md, "Conversions"): each tenant's tracked tags and the parameter of their click ids. */
export class ConversionTags1735400000004 implements MigrationInterface {
  name = 'ConversionTags1735400000004';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS conversion_tags (
        tenant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        tag VARCHAR(50) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
        param VARCHAR(40) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        PRIMARY KEY (tenant_id, tag)
      ) ENGINE=InnoDB`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE conversion_tags');
  }
}

/** The conversions context's migrations of the MySQL meta database, in order (the meta database's whole list: @shortlink/wiring's metaMigrations). */
export const CONVERSIONS_MYSQL_MIGRATIONS = [
  Conversions1735400000001,
  StripeReceiver1735400000002,
  ConversionSettings1735400000003,
  ConversionTags1735400000004,
];
