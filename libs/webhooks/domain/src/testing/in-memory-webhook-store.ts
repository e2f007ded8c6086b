import { AttemptRecord, Delivery, DeliveryPosition, Webhook, WebhookEventType, WebhookStore } from '../index';

/** The webhook store in memory: unit tests' twin of the SQL stores (same contract suite). */
export class InMemoryWebhookStore implements WebhookStore {
  private readonly webhooks = new Map<string, Webhook>();
  private readonly deliveries = new Map<string, Delivery>();

  async insertWebhook(webhook: Webhook) {
    this.webhooks.set(webhook.id, webhook);
  }
  async findWebhook(tenantId: string, id: string) {
    const w = this.webhooks.get(id);
    return w && w.tenantId === tenantId ? w : null;
  }
  async listWebhooks(tenantId: string) {
    return [...this.webhooks.values()]
      .filter((w) => w.tenantId === tenantId)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
  }
  async countWebhooks(tenantId: string) {
    return (await this.listWebhooks(tenantId)).length;
  }
  async updateWebhook(webhook: Webhook) {
    if (!(await this.findWebhook(webhook.tenantId, webhook.id))) return false;
    this.webhooks.set(webhook.id, webhook);
    return true;
  }
  async deleteWebhook(tenantId: string, id: string) {
    if (!(await this.findWebhook(tenantId, id))) return false;
    this.webhooks.delete(id);
    for (const [k, d] of this.deliveries) if (d.webhookId === id) this.deliveries.delete(k);
    return true;
  }
  async setFailingSince(id: string, since: Date | null) {
    const w = this.webhooks.get(id);
    if (w && (since === null || w.failingSince === null)) this.webhooks.set(id, { ...w, failingSince: since });
  }
  async disable(id: string, reason: string, at: Date) {
    const w = this.webhooks.get(id);
    if (!w || !w.enabled) return false;
    this.webhooks.set(id, { ...w, enabled: false, disabledReason: reason, updatedAt: at });
    return true;
  }
  async subscribers(tenantId: string, type: WebhookEventType) {
    return (await this.listWebhooks(tenantId)).filter((w) => w.enabled && w.events.includes(type));
  }
  async enqueue(deliveries: readonly Delivery[]) {
    for (const d of deliveries) if (!this.deliveries.has(d.id)) this.deliveries.set(d.id, d);
  }
  async claimDue(now: Date, leaseUntil: Date, limit: number) {
    const due = [...this.deliveries.values()]
      .filter((d) => d.status === 'pending' && d.nextAttemptAt && d.nextAttemptAt.getTime() <= now.getTime())
      .sort((a, b) => a.nextAttemptAt!.getTime() - b.nextAttemptAt!.getTime())
      .slice(0, limit);
    for (const d of due) this.deliveries.set(d.id, { ...d, nextAttemptAt: leaseUntil });
    return due;
  }
  async recordAttempt(id: string, r: AttemptRecord) {
    const d = this.deliveries.get(id);
    if (d)
      this.deliveries.set(id, {
        ...d,
        status: r.status,
        attempts: d.attempts + 1,
        lastError: r.lastError,
        lastStatusCode: r.lastStatusCode,
        nextAttemptAt: r.nextAttemptAt,
        updatedAt: r.at,
      });
  }
  async findDelivery(webhookId: string, id: string) {
    const d = this.deliveries.get(id);
    return d && d.webhookId === webhookId ? d : null;
  }
  async listDeliveries(webhookId: string, after: DeliveryPosition | null, limit: number) {
    return [...this.deliveries.values()]
      .filter((d) => d.webhookId === webhookId)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id.localeCompare(a.id))
      .filter((d) => !after || d.createdAt.getTime() < after.createdAt.getTime() || (d.createdAt.getTime() === after.createdAt.getTime() && d.id < after.id))
      .slice(0, limit);
  }
  async requeue(id: string, now: Date) {
    const d = this.deliveries.get(id);
    if (d) this.deliveries.set(id, { ...d, status: 'pending', nextAttemptAt: now, updatedAt: now });
  }
}
