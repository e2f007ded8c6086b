import { randomUUID } from 'crypto';
import { AuditContext, AuditLog } from '@shortlink/audit-domain';
import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import { SecretBox, newSigningSecret } from './secret-box';
import { Delivery, Webhook, WEBHOOK_EVENTS, WebhookEventType } from './webhook';
import { WebhookStore } from './ports';
import { WebhookUrlGuard } from './webhook-url';

export interface WebhookInput {
  readonly url: string;
  readonly events: readonly string[];
  readonly description?: string;
}

export interface WebhookEdit {
  readonly url?: string;
  readonly events?: readonly string[];
  readonly description?: string;
  /** true re-enables an endpoint the platform disabled (its failure clock restarts). */
  readonly enabled?: boolean;
}

export interface WebhookServiceOptions {
  /** How long the secret before a rotation still signs (24 h). */
  readonly rotationOverlapMs?: number;
  /** Endpoints a tenant may have. */
  readonly maxPerTenant?: number;
  readonly clock?: Clock;
}

export interface DeliveryPage {
  readonly deliveries: Delivery[];
  readonly nextCursor: string | null;
}

const notFound = (id: string) => new DomainError(ErrorCode.WEBHOOK_NOT_FOUND, `no webhook ${id}`, { webhookId: id });

/** The endpoints' store, the box their secrets are sealed in, the address guard and the audit log. */
export interface WebhookServiceParts {
  readonly store: WebhookStore;
  readonly box: SecretBox;
  readonly guard: WebhookUrlGuard;
  readonly audit: AuditLog;
}

/**
 * A tenant's webhook endpoints (docs/design.md, "Webhooks"): the URL passes the SSRF guard (DNS
 * included), the secret is shown once and stored sealed, every change goes to the audit log.
 */
export class WebhookService {
  private readonly clock: Clock;
  private readonly overlapMs: number;
  private readonly maxPerTenant: number;

  private readonly store: WebhookStore;
  private readonly box: SecretBox;
  private readonly guard: WebhookUrlGuard;
  private readonly audit: AuditLog;

  constructor(parts: WebhookServiceParts, options: WebhookServiceOptions = {}) {
    ({ store: this.store, box: this.box, guard: this.guard, audit: this.audit } = parts);
    this.clock = options.clock ?? systemClock;
    this.overlapMs = options.rotationOverlapMs ?? 24 * 3_600_000;
    this.maxPerTenant = options.maxPerTenant ?? 25;
  }

  async create(tenantId: string, input: WebhookInput, context: AuditContext): Promise<{ webhook: Webhook; secret: string }> {
    const events = eventsOf(input.events);
    const { url } = await this.guard.resolve(input.url);
    if ((await this.store.countWebhooks(tenantId)) >= this.maxPerTenant)
      throw new DomainError(ErrorCode.WEBHOOK_LIMIT_REACHED, `a tenant has at most ${this.maxPerTenant} webhooks`, { limit: this.maxPerTenant });
    const now = new Date(this.clock.now());
    const secret = newSigningSecret();
    const webhook: Webhook = {
      id: `wh_${randomUUID().replace(/-/g, '')}`,
      tenantId,
      url: url.toString(),
      events,
      description: input.description ?? '',
      enabled: true,
      disabledReason: null,
      secret: this.box.seal(secret),
      previousSecret: null,
      previousSecretUntil: null,
      failingSince: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.store.insertWebhook(webhook);
    await this.record(context, webhook, 'webhook.created', { url: { to: webhook.url }, events: { to: [...events] } });
    return { webhook, secret };
  }

  async get(tenantId: string, id: string): Promise<Webhook> {
    const found = await this.store.findWebhook(tenantId, id);
    if (!found) throw notFound(id);
    return found;
  }

  list(tenantId: string): Promise<Webhook[]> {
    return this.store.listWebhooks(tenantId);
  }

  async update(tenantId: string, id: string, edit: WebhookEdit, context: AuditContext): Promise<Webhook> {
    const before = await this.get(tenantId, id);
    const url = edit.url === undefined ? before.url : (await this.guard.resolve(edit.url)).url.toString();
    const events = edit.events === undefined ? before.events : eventsOf(edit.events);
    const enabled = edit.enabled ?? before.enabled;
    const after: Webhook = {
      ...before,
      url,
      events,
      description: edit.description ?? before.description,
      enabled,
      disabledReason: enabled ? null : (before.disabledReason ?? 'by-owner'),
      failingSince: enabled && !before.enabled ? null : before.failingSince,
      updatedAt: new Date(this.clock.now()),
    };
    if (!(await this.store.updateWebhook(after))) throw notFound(id);
    const changes: Record<string, { from: string | boolean | string[]; to: string | boolean | string[] }> = {};
    if (after.url !== before.url) changes.url = { from: before.url, to: after.url };
    if (after.events.join() !== before.events.join()) changes.events = { from: [...before.events], to: [...after.events] };
    if (after.description !== before.description) changes.description = { from: before.description, to: after.description };
    if (after.enabled !== before.enabled) changes.enabled = { from: before.enabled, to: after.enabled };
    await this.record(context, after, 'webhook.updated', changes);
    return after;
  }

  async remove(tenantId: string, id: string, context: AuditContext): Promise<void> {
    const before = await this.get(tenantId, id);
    if (!(await this.store.deleteWebhook(tenantId, id))) throw notFound(id);
    await this.record(context, before, 'webhook.deleted', { url: { from: before.url, to: null } });
  }

  /** A new secret, shown once; the current one keeps signing beside it for the overlap (24 h). */
  async rotateSecret(tenantId: string, id: string, context: AuditContext): Promise<{ webhook: Webhook; secret: string; previousSecretValidUntil: Date }> {
    const before = await this.get(tenantId, id);
    const now = this.clock.now();
    const secret = newSigningSecret();
    const until = new Date(now + this.overlapMs);
    const after: Webhook = { ...before, secret: this.box.seal(secret), previousSecret: before.secret, previousSecretUntil: until, updatedAt: new Date(now) };
    if (!(await this.store.updateWebhook(after))) throw notFound(id);
    await this.audit.record(
      this.audit.entry(context, {
        log: tenantId,
        action: 'webhook.secret_rotated',
        target: { type: 'webhook', id, domain: null },
        details: { previousValidUntil: until.toISOString() },
      }),
    );
    return { webhook: after, secret, previousSecretValidUntil: until };
  }

  /** Deliveries newest first; the cursor is `<createdAt ms>.<id>`, opaque to clients. */
  async deliveries(tenantId: string, id: string, limit: number, cursor: string | null): Promise<DeliveryPage> {
    await this.get(tenantId, id);
    const after = cursor ? openCursor(cursor) : null;
    const found = await this.store.listDeliveries(id, after, limit + 1);
    const deliveries = found.slice(0, limit);
    const last = deliveries[deliveries.length - 1];
    return { deliveries, nextCursor: found.length > limit ? Buffer.from(`${last.createdAt.getTime()}.${last.id}`).toString('base64url') : null };
  }

  /** The delivery again, now, under its own `webhook-id` (an idempotent receiver that applied it ignores it). */
  async redeliver(tenantId: string, id: string, deliveryId: string): Promise<Delivery> {
    await this.get(tenantId, id);
    const delivery = await this.store.findDelivery(id, deliveryId);
    if (!delivery) throw new DomainError(ErrorCode.DELIVERY_NOT_FOUND, `no delivery ${deliveryId} of webhook ${id}`, { deliveryId });
    const now = new Date(this.clock.now());
    await this.store.requeue(deliveryId, now);
    return { ...delivery, status: 'pending', nextAttemptAt: now, updatedAt: now };
  }

  private record(context: AuditContext, webhook: Webhook, action: 'webhook.created' | 'webhook.updated' | 'webhook.deleted', changes: object): Promise<void> {
    return this.audit.record(
      this.audit.entry(context, {
        log: webhook.tenantId,
        action,
        target: { type: 'webhook', id: webhook.id, domain: null },
        changes: changes as never,
      }),
    );
  }
}

function eventsOf(given: readonly string[]): WebhookEventType[] {
  const unknown = given.filter((e) => !(WEBHOOK_EVENTS as readonly string[]).includes(e));
  if (unknown.length || !given.length)
    throw new DomainError(ErrorCode.VALIDATION_FAILED, `events must be one or more of ${WEBHOOK_EVENTS.join(', ')}`, { field: 'events', unknown });
  return [...new Set(given)].sort() as WebhookEventType[];
}

function openCursor(cursor: string): { createdAt: Date; id: string } {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const m = /^(\d{1,15})\.(msg_[0-9a-f]{32})$/.exec(text);
  if (!m) throw new DomainError(ErrorCode.INVALID_CURSOR, 'cursor is not a cursor of this listing', {});
  return { createdAt: new Date(Number(m[1])), id: m[2] };
}
