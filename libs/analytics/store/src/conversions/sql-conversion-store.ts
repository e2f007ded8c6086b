import { DataSource } from 'typeorm';
import type { Attribution, ConversionStore, Customer, StripeSettings } from '@shortlink/clicks-domain';
import { GroupCommit } from '@shortlink/core';
import { isMysqlDuplicate, type SqlDialect, type SqlExecutor, SqliteDb, toDate } from '@shortlink/sql';

interface CustomerRow {
  tenant_id: string;
  customer_id: string;
  link_id: string | number | bigint;
  domain: string;
  code: string;
  click_id: string;
  created_at: Date | number;
}

interface StripeRow {
  tenant_id: string;
  sealed_secret: string;
  secret_hint: string;
  created_at: Date | number;
  updated_at: Date | number;
}

/** A customer looked up in a group: `found` is set by the group's SELECT. */
interface CustomerRead {
  readonly tenantId: string;
  readonly customerId: string;
  found: Customer | null;
}

const customerOf = (r: CustomerRow): Customer => ({
  tenantId: r.tenant_id,
  customerId: r.customer_id,
  linkId: String(r.link_id),
  domain: r.domain,
  code: r.code,
  clickId: r.click_id,
  createdAt: toDate(r.created_at),
});

/**
 * The conversions' records (docs/design.md, "Conversions") on either meta database: a customer's
 * first lead (`conversion_customers`, one row per tenant and customer: the first insert wins) and the
 * invoice ids counted (`conversion_invoices`). Both are claimed by an insert that skips a duplicate.
 */
export class SqlConversionStore implements ConversionStore {
  /** Concurrent claims of new customers and invoices, each group one multi-row INSERT (with `grouped`); null: one insert each. */
  private readonly customerClaims: GroupCommit<Customer> | null;
  private readonly invoiceClaims: GroupCommit<{ tenantId: string; invoiceId: string; at: Date }> | null;
  /** Concurrent lookups of customers (a sale's), each group one SELECT (with `grouped`). */
  private readonly customerReads: GroupCommit<CustomerRead> | null;

  constructor(
    private readonly sql: SqlExecutor,
    private readonly dialect: SqlDialect,
    /**
     * Group commit of the claims (docs/design.md, "Group commit"): on a database a round trip away,
     * the claims that arrive while one is in flight go together as one plain multi-row INSERT. A
     * statement is atomic: it inserts every row or, on a duplicate key (a customer or an invoice
     * counted before), none; that group's claims are then made again one by one, and a duplicate
     * claim alone goes the ungrouped way (INSERT IGNORE, then the stored row), so each caller learns
     * whether its own row is new exactly as without grouping. Concurrent lookups of customers (a
     * sale's) go together as one SELECT the same way.
     */
    grouped?: { readonly isDuplicate: (error: unknown) => boolean; readonly concurrency: number; readonly maxRows: number },
  ) {
    const group = <T>(write: (items: readonly T[]) => Promise<void>) =>
      grouped ? new GroupCommit<T>({ write, maxItems: grouped.maxRows, concurrency: grouped.concurrency, retryAlone: grouped.isDuplicate }) : null;
    this.customerClaims = group<Customer>(async (customers) => {
      await this.sql.change(
        `INSERT INTO conversion_customers (tenant_id, customer_id, link_id, domain, code, click_id, created_at) VALUES ${customers.map(() => '(?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
        customers.flatMap((c) => [c.tenantId, c.customerId, c.linkId, c.domain, c.code, c.clickId, this.dialect.time(c.createdAt)]),
      );
    });
    this.invoiceClaims = group<{ tenantId: string; invoiceId: string; at: Date }>(async (claims) => {
      await this.sql.change(
        `INSERT INTO conversion_invoices (tenant_id, invoice_id, created_at) VALUES ${claims.map(() => '(?, ?, ?)').join(', ')}`,
        claims.flatMap((c) => [c.tenantId, c.invoiceId, this.dialect.time(c.at)]),
      );
    });
    // A lookup issued after its caller's lead was acknowledged sees it: the group's SELECT starts later still.
    this.customerReads = group<CustomerRead>(async (reads) => {
      const rows = await this.sql.select<CustomerRow>(
        `SELECT tenant_id, customer_id, link_id, domain, code, click_id, created_at FROM conversion_customers WHERE ${reads.map(() => '(tenant_id = ? AND customer_id = ?)').join(' OR ')}`,
        reads.flatMap((r) => [r.tenantId, r.customerId]),
      );
      for (const read of reads) {
        const row = rows.find((r) => r.tenant_id === read.tenantId && r.customer_id === read.customerId);
        read.found = row ? customerOf(row) : null;
      }
    });
    this.isDuplicate = grouped?.isDuplicate ?? (() => false);
  }

  private readonly isDuplicate: (error: unknown) => boolean;

  /** A grouped claim: true when its row is new, false when the key was there (then asked again without grouping). */
  private async claimed<T>(claims: GroupCommit<T> | null, item: T): Promise<boolean> {
    if (claims === null) return false;
    try {
      await claims.submit(item);
      return true;
    } catch (error) {
      if (this.isDuplicate(error)) return false;
      throw error;
    }
  }

  async addCustomer(customer: Customer): Promise<{ created: boolean; customer: Customer }> {
    if (await this.claimed(this.customerClaims, customer)) return { created: true, customer };
    const inserted = await this.sql.change(
      `${this.dialect.insertIgnore} conversion_customers (tenant_id, customer_id, link_id, domain, code, click_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      [customer.tenantId, customer.customerId, customer.linkId, customer.domain, customer.code, customer.clickId, this.dialect.time(customer.createdAt)],
    );
    if (inserted === 1) return { created: true, customer };
    const known = await this.customer(customer.tenantId, customer.customerId);
    return { created: false, customer: known ?? customer };
  }

  async customer(tenantId: string, customerId: string): Promise<Customer | null> {
    if (this.customerReads) {
      const read: CustomerRead = { tenantId, customerId, found: null };
      await this.customerReads.submit(read);
      return read.found;
    }
    const rows = await this.sql.select<CustomerRow>(
      'SELECT tenant_id, customer_id, link_id, domain, code, click_id, created_at FROM conversion_customers WHERE tenant_id = ? AND customer_id = ?',
      [tenantId, customerId],
    );
    return rows.length ? customerOf(rows[0]) : null;
  }

  async removeCustomer(tenantId: string, customerId: string): Promise<void> {
    await this.sql.change('DELETE FROM conversion_customers WHERE tenant_id = ? AND customer_id = ?', [tenantId, customerId]);
  }

  async claimInvoice(tenantId: string, invoiceId: string, at: Date): Promise<boolean> {
    if (await this.claimed(this.invoiceClaims, { tenantId, invoiceId, at })) return true;
    const inserted = await this.sql.change(`${this.dialect.insertIgnore} conversion_invoices (tenant_id, invoice_id, created_at) VALUES (?, ?, ?)`, [
      tenantId,
      invoiceId,
      this.dialect.time(at),
    ]);
    return inserted === 1;
  }

  async releaseInvoice(tenantId: string, invoiceId: string): Promise<void> {
    await this.sql.change('DELETE FROM conversion_invoices WHERE tenant_id = ? AND invoice_id = ?', [tenantId, invoiceId]);
  }

  async touchCustomer(customer: Customer): Promise<void> {
    await this.sql.change('UPDATE conversion_customers SET link_id = ?, domain = ?, code = ?, click_id = ? WHERE tenant_id = ? AND customer_id = ?', [
      customer.linkId,
      customer.domain,
      customer.code,
      customer.clickId,
      customer.tenantId,
      customer.customerId,
    ]);
  }

  async attribution(tenantId: string): Promise<Attribution> {
    const rows = await this.sql.select<{ attribution: string }>('SELECT attribution FROM conversion_settings WHERE tenant_id = ?', [tenantId]);
    return rows[0]?.attribution === 'last' ? 'last' : 'first';
  }

  async setAttribution(tenantId: string, attribution: Attribution): Promise<void> {
    if ((await this.sql.change('UPDATE conversion_settings SET attribution = ? WHERE tenant_id = ?', [attribution, tenantId])) > 0) return;
    await this.sql.change(`${this.dialect.insertIgnore} conversion_settings (tenant_id, attribution) VALUES (?, ?)`, [tenantId, attribution]);
  }

  async trackedTags(tenantId: string): Promise<ReadonlyMap<string, string>> {
    const rows = await this.sql.select<{ tag: string; param: string }>('SELECT tag, param FROM conversion_tags WHERE tenant_id = ?', [tenantId]);
    return new Map(rows.map((r) => [r.tag, r.param]));
  }

  async setTagTracking(tenantId: string, tag: string, conversionParam: string | null): Promise<void> {
    if (conversionParam === null) {
      await this.sql.change('DELETE FROM conversion_tags WHERE tenant_id = ? AND tag = ?', [tenantId, tag]);
      return;
    }
    if ((await this.sql.change('UPDATE conversion_tags SET param = ? WHERE tenant_id = ? AND tag = ?', [conversionParam, tenantId, tag])) > 0) return;
    await this.sql.change(`${this.dialect.insertIgnore} conversion_tags (tenant_id, tag, param) VALUES (?, ?, ?)`, [tenantId, tag, conversionParam]);
  }

  async stripeSettings(tenantId: string): Promise<StripeSettings | null> {
    const rows = await this.sql.select<StripeRow>(
      'SELECT tenant_id, sealed_secret, secret_hint, created_at, updated_at FROM stripe_settings WHERE tenant_id = ?',
      [tenantId],
    );
    if (!rows.length) return null;
    const r = rows[0];
    return {
      tenantId: r.tenant_id,
      sealedSecret: r.sealed_secret,
      secretHint: r.secret_hint,
      createdAt: toDate(r.created_at),
      updatedAt: toDate(r.updated_at),
    };
  }

  async saveStripeSettings(settings: StripeSettings): Promise<void> {
    const values = [settings.sealedSecret, settings.secretHint, this.dialect.time(settings.updatedAt), settings.tenantId];
    const updated = await this.sql.change('UPDATE stripe_settings SET sealed_secret = ?, secret_hint = ?, updated_at = ? WHERE tenant_id = ?', values);
    if (updated > 0) return;
    await this.sql.change(
      `${this.dialect.insertIgnore} stripe_settings (tenant_id, sealed_secret, secret_hint, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
      [settings.tenantId, settings.sealedSecret, settings.secretHint, this.dialect.time(settings.createdAt), this.dialect.time(settings.updatedAt)],
    );
  }

  async removeStripeSettings(tenantId: string): Promise<boolean> {
    return (await this.sql.change('DELETE FROM stripe_settings WHERE tenant_id = ?', [tenantId])) > 0;
  }

  async linkStripeCustomer(tenantId: string, stripeCustomerId: string, customerId: string): Promise<void> {
    await this.sql.change(`${this.dialect.insertIgnore} stripe_customers (tenant_id, stripe_customer_id, customer_id) VALUES (?, ?, ?)`, [
      tenantId,
      stripeCustomerId,
      customerId,
    ]);
  }

  async stripeCustomer(tenantId: string, stripeCustomerId: string): Promise<string | null> {
    const rows = await this.sql.select<{ customer_id: string }>('SELECT customer_id FROM stripe_customers WHERE tenant_id = ? AND stripe_customer_id = ?', [
      tenantId,
      stripeCustomerId,
    ]);
    return rows.length ? rows[0].customer_id : null;
  }
}

/** On the embedded meta database (times in epoch ms). */
export const sqliteConversionStore = (db: SqliteDb): SqlConversionStore =>
  new SqlConversionStore(
    {
      select: async <T>(sql: string, params: readonly unknown[]) => db.prepare(sql).all(...params) as T[],
      change: async (sql, params) => db.prepare(sql).run(...params).changes,
    },
    { time: (d) => d.getTime(), insertIgnore: 'INSERT OR IGNORE INTO' },
  );

/** On the MySQL meta database (DATETIME(3)). */
export const mysqlConversionStore = (ds: DataSource): SqlConversionStore =>
  new SqlConversionStore(
    {
      select: async <T>(sql: string, params: readonly unknown[]) => (await ds.query(sql, [...params])) as T[],
      change: async (sql, params) => ((await ds.query(sql, [...params])) as { affectedRows: number }).affectedRows,
    },
    { time: (d) => d, insertIgnore: 'INSERT IGNORE INTO' },
    // The pool's connections carry a few groups at once; a group of new leads is one round trip.
    { isDuplicate: isMysqlDuplicate, concurrency: 4, maxRows: 200 },
  );
