import type { AttemptRecord, Delivery, DeliveryPosition, Webhook, WebhookEventType, WebhookStore } from '@shortlink/webhooks-domain';
import { SqlDialect, SqlExecutor, toDate } from '@shortlink/sql';

interface WebhookRow {
  id: string;
  tenant_id: string;
  url: string;
  events: string;
  description: string;
  enabled: number;
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | number | null;
  failing_since: Date | number | null;
  created_at: Date | number;
  updated_at: Date | number;
}

interface DeliveryRow {
  id: string;
  webhook_id: string;
  tenant_id: string;
  event_type: string;
  payload: string;
  status: Delivery['status'];
  attempts: number;
  last_error: string | null;
  last_status_code: number | null;
  next_attempt_at: Date | number | null;
  created_at: Date | number;
  updated_at: Date | number;
}

const WEBHOOK_COLUMNS =
  'id, tenant_id, url, events, description, enabled, disabled_reason, secret, previous_secret, previous_secret_until, failing_since, created_at, updated_at';
const DELIVERY_COLUMNS =
  'id, webhook_id, tenant_id, event_type, payload, status, attempts, last_error, last_status_code, next_attempt_at, created_at, updated_at';

const maybeDate = (v: Date | number | null): Date | null => (v === null ? null : toDate(v));

const webhookOf = (r: WebhookRow): Webhook => ({
  id: r.id,
  tenantId: r.tenant_id,
  url: r.url,
  events: r.events.split(' ').filter(Boolean) as WebhookEventType[],
  description: r.description,
  enabled: Number(r.enabled) === 1,
  disabledReason: r.disabled_reason,
  secret: r.secret,
  previousSecret: r.previous_secret,
  previousSecretUntil: maybeDate(r.previous_secret_until),
  failingSince: maybeDate(r.failing_since),
  createdAt: toDate(r.created_at),
  updatedAt: toDate(r.updated_at),
});

const deliveryOf = (r: DeliveryRow): Delivery => ({
  id: r.id,
  webhookId: r.webhook_id,
  tenantId: r.tenant_id,
  eventType: r.event_type as WebhookEventType,
  payload: r.payload,
  status: r.status,
  attempts: Number(r.attempts),
  lastError: r.last_error,
  lastStatusCode: r.last_status_code === null ? null : Number(r.last_status_code),
  nextAttemptAt: maybeDate(r.next_attempt_at),
  createdAt: toDate(r.created_at),
  updatedAt: toDate(r.updated_at),
});

/**
 * Webhook endpoints and their deliveries in the meta database, one implementation for SQLite and
 * MySQL (docs/design.md, "Webhooks"); the tables are the meta store's migrations.
 */
export class SqlWebhookStore implements WebhookStore {
  constructor(
    private readonly db: SqlExecutor,
    private readonly dialect: SqlDialect,
  ) {}

  private t(d: Date | null): unknown {
    return d === null ? null : this.dialect.time(d);
  }

  async insertWebhook(w: Webhook): Promise<void> {
    await this.db.change(`INSERT INTO webhooks (${WEBHOOK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, this.webhookParams(w));
  }

  async findWebhook(tenantId: string, id: string): Promise<Webhook | null> {
    const rows = await this.db.select<WebhookRow>(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE tenant_id = ? AND id = ?`, [tenantId, id]);
    return rows.length ? webhookOf(rows[0]) : null;
  }

  async listWebhooks(tenantId: string): Promise<Webhook[]> {
    return (await this.db.select<WebhookRow>(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE tenant_id = ? ORDER BY created_at, id`, [tenantId])).map(webhookOf);
  }

  async countWebhooks(tenantId: string): Promise<number> {
    const [row] = await this.db.select<{ n: number | string }>('SELECT COUNT(*) AS n FROM webhooks WHERE tenant_id = ?', [tenantId]);
    return Number(row.n);
  }

  async updateWebhook(w: Webhook): Promise<boolean> {
    const [id, tenantId, ...rest] = this.webhookParams(w);
    const changed = await this.db.change(
      'UPDATE webhooks SET url = ?, events = ?, description = ?, enabled = ?, disabled_reason = ?, secret = ?, previous_secret = ?, previous_secret_until = ?, failing_since = ?, created_at = ?, updated_at = ? WHERE id = ? AND tenant_id = ?',
      [...rest, id, tenantId],
    );
    return changed > 0;
  }

  async deleteWebhook(tenantId: string, id: string): Promise<boolean> {
    const deleted = await this.db.change('DELETE FROM webhooks WHERE tenant_id = ? AND id = ?', [tenantId, id]);
    if (deleted) await this.db.change('DELETE FROM webhook_deliveries WHERE webhook_id = ?', [id]);
    return deleted > 0;
  }

  async setFailingSince(id: string, since: Date | null): Promise<void> {
    if (since === null) await this.db.change('UPDATE webhooks SET failing_since = NULL WHERE id = ?', [id]);
    else await this.db.change('UPDATE webhooks SET failing_since = ? WHERE id = ? AND failing_since IS NULL', [this.t(since), id]);
  }

  async disable(id: string, reason: string, at: Date): Promise<boolean> {
    return (
      (await this.db.change('UPDATE webhooks SET enabled = 0, disabled_reason = ?, updated_at = ? WHERE id = ? AND enabled = 1', [reason, this.t(at), id])) > 0
    );
  }

  async subscribers(tenantId: string, type: WebhookEventType): Promise<Webhook[]> {
    // A handful of endpoints per tenant: filtering the events here is cheaper than an index on them.
    return (await this.listWebhooks(tenantId)).filter((w) => w.enabled && w.events.includes(type));
  }

  async enqueue(deliveries: readonly Delivery[]): Promise<void> {
    for (const d of deliveries) {
      await this.db.change(`${this.dialect.insertIgnore} webhook_deliveries (${DELIVERY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
        d.id,
        d.webhookId,
        d.tenantId,
        d.eventType,
        d.payload,
        d.status,
        d.attempts,
        d.lastError,
        d.lastStatusCode,
        this.t(d.nextAttemptAt),
        this.t(d.createdAt),
        this.t(d.updatedAt),
      ]);
    }
  }

  async claimDue(now: Date, leaseUntil: Date, limit: number): Promise<Delivery[]> {
    const due = await this.db.select<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?`,
      [this.t(now), limit],
    );
    const claimed: Delivery[] = [];
    for (const row of due) {
      // Compare-and-set on the due time: of two deliverers reading the same row, one moves it.
      const moved = await this.db.change("UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ? AND status = 'pending' AND next_attempt_at = ?", [
        this.t(leaseUntil),
        row.id,
        row.next_attempt_at,
      ]);
      if (moved) claimed.push(deliveryOf(row));
    }
    return claimed;
  }

  async recordAttempt(id: string, r: AttemptRecord): Promise<void> {
    await this.db.change(
      'UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, last_error = ?, last_status_code = ?, next_attempt_at = ?, updated_at = ? WHERE id = ?',
      [r.status, r.lastError, r.lastStatusCode, this.t(r.nextAttemptAt), this.t(r.at), id],
    );
  }

  async findDelivery(webhookId: string, id: string): Promise<Delivery | null> {
    const rows = await this.db.select<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = ? AND id = ?`, [webhookId, id]);
    return rows.length ? deliveryOf(rows[0]) : null;
  }

  async listDeliveries(webhookId: string, after: DeliveryPosition | null, limit: number): Promise<Delivery[]> {
    const rows = after
      ? await this.db.select<DeliveryRow>(
          `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = ? AND (created_at < ? OR (created_at = ? AND id < ?)) ORDER BY created_at DESC, id DESC LIMIT ?`,
          [webhookId, this.t(after.createdAt), this.t(after.createdAt), after.id, limit],
        )
      : await this.db.select<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`, [
          webhookId,
          limit,
        ]);
    return rows.map(deliveryOf);
  }

  async requeue(id: string, now: Date): Promise<void> {
    await this.db.change("UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, updated_at = ? WHERE id = ?", [this.t(now), this.t(now), id]);
  }

  private webhookParams(w: Webhook): unknown[] {
    return [
      w.id,
      w.tenantId,
      w.url,
      w.events.join(' '),
      w.description,
      w.enabled ? 1 : 0,
      w.disabledReason,
      w.secret,
      w.previousSecret,
      this.t(w.previousSecretUntil),
      this.t(w.failingSince),
      this.t(w.createdAt),
      this.t(w.updatedAt),
    ];
  }
}
