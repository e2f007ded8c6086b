import { createHash } from 'crypto';
import { auditEntry, AuditLogStore, SYSTEM_ACTOR } from '@shortlink/audit-domain';
import { ClickEvent } from '@shortlink/clicks-domain';
import { Clock, systemClock } from '@shortlink/core';
import { nextAttemptAt, RetrySchedule } from './retry-schedule';
import { SecretBox } from './secret-box';
import { signedHeaders } from './signing';
import { Delivery, PlatformEvent, Webhook } from './webhook';
import { WebhookStore, WebhookTransport } from './ports';
import { WebhookUrlGuard } from './webhook-url';

export interface DelivererOptions {
  readonly schedule: RetrySchedule;
  /** An endpoint whose every attempt failed for this long is disabled (3 days). */
  readonly disableAfterMs: number;
  /** How often due deliveries are looked for when nothing woke the pump. */
  readonly pollMs?: number;
  /** Attempts in flight at once. */
  readonly concurrency?: number;
  /** How long a claimed delivery is another deliverer's to leave alone. */
  readonly leaseMs?: number;
  readonly clock?: Clock;
  readonly random?: () => number;
  readonly onError?: (error: unknown) => void;
}

/** `msg_` and 32 hex of a hash of the event and the endpoint: the same event to the same endpoint is the same message, replayed or not. */
export const deliveryIdOf = (eventId: string, webhookId: string): string =>
  `msg_${createHash('sha256').update(`${eventId}\n${webhookId}`).digest('hex').slice(0, 32)}`;

/** The Standard Webhooks body: `{type, timestamp, data}`. */
const bodyOf = (event: PlatformEvent): string => JSON.stringify({ type: event.type, timestamp: new Date(event.at).toISOString(), data: event.data });

/**
 * link.clicked events of one consumer batch: one per tenant and second of the clicks, with the
 * clicks of that second (docs/design.md, "Webhooks": at most one delivery per second per endpoint
 * while a second's clicks arrive in one batch). The id hashes the clicks' own ids, so a replay of
 * the same batch enqueues nothing twice.
 */
export function clickEventsOf(clicks: readonly ClickEvent[]): PlatformEvent[] {
  const groups = new Map<string, ClickEvent[]>();
  for (const c of clicks) {
    if (c.kind !== 'click' || !c.tenantId) continue;
    const key = `${c.tenantId}\n${Math.floor(c.occurredAt / 1000)}`;
    const group = groups.get(key) ?? [];
    group.push(c);
    groups.set(key, group);
  }
  return [...groups.entries()].map(([key, group]) => {
    const [tenantId, second] = key.split('\n');
    const ids = group.map((c) => `${c.producer}-${c.seq}`).sort();
    return {
      id: `clk_${createHash('sha256')
        .update(`${key}\n${ids.join(',')}`)
        .digest('hex')
        .slice(0, 32)}`,
      type: 'link.clicked' as const,
      tenantId,
      at: Number(second) * 1000,
      data: {
        clicks: group.map((c) => ({
          domain: c.domain,
          code: c.code,
          at: new Date(c.occurredAt).toISOString(),
          country: c.country,
          refererHost: c.refererHost,
          variant: c.variant,
        })),
      },
    };
  });
}

/** What the deliverer works with: the endpoints and deliveries, the wire, the address guard, the secrets' box, the audit log. */
export interface DelivererParts {
  readonly store: WebhookStore;
  readonly transport: WebhookTransport;
  readonly guard: WebhookUrlGuard;
  readonly box: SecretBox;
  readonly audit: AuditLogStore;
}

/**
 * The webhook deliverer (docs/design.md, "Webhooks"): turns the platform's events into deliveries
 * (one per subscribed endpoint, stored before the bus offsets are committed: at-least-once), then
 * attempts the due ones, signing each attempt with the endpoint's secrets, and schedules the
 * failed ones with exponential backoff and jitter until the window ends. An endpoint failing for
 * `disableAfterMs` is disabled and its tenant's audit log says so.
 */
export class WebhookDeliverer {
  private readonly clock: Clock;
  private readonly random: () => number;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;

  private readonly store: WebhookStore;
  private readonly transport: WebhookTransport;
  private readonly guard: WebhookUrlGuard;
  private readonly box: SecretBox;
  private readonly audit: AuditLogStore;

  constructor(
    parts: DelivererParts,
    private readonly options: DelivererOptions,
  ) {
    ({ store: this.store, transport: this.transport, guard: this.guard, box: this.box, audit: this.audit } = parts);
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
  }

  /** Stores a delivery per subscribed endpoint of each event, then wakes the pump. */
  async accept(events: readonly PlatformEvent[]): Promise<number> {
    const now = new Date(this.clock.now());
    const deliveries: Delivery[] = [];
    for (const event of events) {
      for (const webhook of await this.store.subscribers(event.tenantId, event.type)) {
        deliveries.push({
          id: deliveryIdOf(event.id, webhook.id),
          webhookId: webhook.id,
          tenantId: event.tenantId,
          eventType: event.type,
          payload: bodyOf(event),
          status: 'pending',
          attempts: 0,
          lastError: null,
          lastStatusCode: null,
          nextAttemptAt: now,
          createdAt: now,
          updatedAt: now,
        });
      }
    }
    await this.store.enqueue(deliveries);
    if (deliveries.length) this.wake();
    return deliveries.length;
  }

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Runs a pass now (or right after the one running). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.running = this.pass()
      .then(() => undefined)
      .catch((error) => this.options.onError?.(error))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.wake();
        } else this.schedule();
      });
  }

  /** Attempts every due delivery once; how many it attempted. */
  async pass(): Promise<number> {
    const concurrency = this.options.concurrency ?? 16;
    let total = 0;
    for (;;) {
      const now = new Date(this.clock.now());
      const due = await this.store.claimDue(now, new Date(now.getTime() + (this.options.leaseMs ?? 60_000)), concurrency);
      if (!due.length) return total;
      await Promise.all(due.map((d) => this.attempt(d)));
      total += due.length;
    }
  }

  private schedule(): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.wake();
    }, this.options.pollMs ?? 1000);
    this.timer.unref?.();
  }

  private async attempt(delivery: Delivery): Promise<void> {
    const webhook = await this.store.findWebhook(delivery.tenantId, delivery.webhookId);
    const now = new Date(this.clock.now());
    const attempts = delivery.attempts + 1;
    if (!webhook || !webhook.enabled) {
      await this.store.recordAttempt(delivery.id, {
        status: 'failed',
        lastError: 'endpoint disabled or deleted',
        lastStatusCode: null,
        nextAttemptAt: null,
        at: now,
      });
      return;
    }
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      // The URL is checked again now: a host may resolve elsewhere than at creation.
      await this.guard.resolve(webhook.url);
      const result = await this.transport.post(webhook.url, signedHeaders(delivery.id, now, delivery.payload, this.secretsOf(webhook, now)), delivery.payload);
      statusCode = result.statusCode;
      error = result.error ?? (statusCode !== null && statusCode >= 200 && statusCode < 300 ? null : `receiver answered ${statusCode}`);
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
    const done = new Date(this.clock.now());
    if (error === null) {
      await this.store.recordAttempt(delivery.id, { status: 'succeeded', lastError: null, lastStatusCode: statusCode, nextAttemptAt: null, at: done });
      if (webhook.failingSince) await this.store.setFailingSince(webhook.id, null);
      return;
    }
    const next = nextAttemptAt(this.options.schedule, attempts, delivery.createdAt, done, this.random);
    await this.store.recordAttempt(delivery.id, {
      status: next ? 'pending' : 'failed',
      lastError: error.slice(0, 500),
      lastStatusCode: statusCode,
      nextAttemptAt: next,
      at: done,
    });
    await this.noteFailure(webhook, done);
  }

  private secretsOf(webhook: Webhook, now: Date): string[] {
    const secrets = [this.box.open(webhook.secret)];
    if (webhook.previousSecret && webhook.previousSecretUntil && webhook.previousSecretUntil.getTime() > now.getTime())
      secrets.push(this.box.open(webhook.previousSecret));
    return secrets;
  }

  private async noteFailure(webhook: Webhook, now: Date): Promise<void> {
    const current = (await this.store.findWebhook(webhook.tenantId, webhook.id)) ?? webhook;
    if (!current.enabled) return;
    if (!current.failingSince) {
      await this.store.setFailingSince(current.id, now);
      return;
    }
    if (now.getTime() - current.failingSince.getTime() < this.options.disableAfterMs) return;
    if (!(await this.store.disable(current.id, 'failing', now))) return;
    await this.audit.append([
      auditEntry(
        { actor: SYSTEM_ACTOR, clientAddress: null },
        {
          log: current.tenantId,
          action: 'webhook.disabled',
          target: { type: 'webhook', id: current.id, domain: null },
          details: { reason: 'failing', failingSince: current.failingSince.toISOString(), url: current.url },
        },
        now,
      ),
    ]);
  }
}
