/** The conversions context's migrations of the SQLite meta database, in order (the meta database's whole list: @shortlink/wiring's metaMigrations). */
export const CONVERSIONS_SQLITE_MIGRATIONS = [
  {
    // Conversions (docs/design.md, "Conversions"): each customer's first lead (the link its sales go
    // to) and the invoice ids counted. Times in epoch ms.
    name: '015_conversions',
    up: `
      CREATE TABLE conversion_customers (
        tenant_id TEXT NOT NULL, customer_id TEXT NOT NULL, link_id INTEGER NOT NULL, domain TEXT NOT NULL, code TEXT NOT NULL,
        click_id TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (tenant_id, customer_id));
      CREATE TABLE conversion_invoices (tenant_id TEXT NOT NULL, invoice_id TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (tenant_id, invoice_id));`,
  },
  {
    // The Stripe receiver (docs/stripe.md): each tenant's signing secret, sealed, and the Stripe
    // customers a checkout linked to one of the tenant's customers. Times in epoch ms.
    name: '016_stripe_receiver',
    up: `
      CREATE TABLE stripe_settings (
        tenant_id TEXT NOT NULL PRIMARY KEY, sealed_secret TEXT NOT NULL, secret_hint TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
      CREATE TABLE stripe_customers (
        tenant_id TEXT NOT NULL, stripe_customer_id TEXT NOT NULL, customer_id TEXT NOT NULL, PRIMARY KEY (tenant_id, stripe_customer_id));`,
  },
  {
    // Each tenant's conversion settings (docs/analytics.md, "Conversions"): its attribution model.
    name: '017_conversion_settings',
    up: `CREATE TABLE conversion_settings (tenant_id TEXT NOT NULL PRIMARY KEY, attribution TEXT NOT NULL);`,
  },
  {
    // Conversion tracking on tags (docs/design.md, "Conversions"): each tenant's tracked tags and their click id parameter.
    name: '018_conversion_tags',
    up: `CREATE TABLE conversion_tags (tenant_id TEXT NOT NULL, tag TEXT NOT NULL, param TEXT NOT NULL, PRIMARY KEY (tenant_id, tag));`,
  },
];
