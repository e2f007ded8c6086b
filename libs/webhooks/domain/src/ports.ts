import { Delivery, PlatformEvent, Webhook, WebhookEventType } from './webhook';

/** Where a page of deliveries ends (newest first: createdAt, then id). */
export interface DeliveryPosition {
  readonly createdAt: Date;
  readonly id: string;
}

/** The outcome of one attempt, as the deliverer records it. */
export interface AttemptRecord {
  readonly status: Delivery['status'];
  readonly lastError: string | null;
  readonly lastStatusCode: number | null;
  readonly nextAttemptAt: Date | null;
  readonly at: Date;
}

/** Endpoints and their deliveries in the meta database (docs/design.md, "Webhooks"). */
export interface WebhookStore {
  insertWebhook(webhook: Webhook): Promise<void>;
  findWebhook(tenantId: string, id: string): Promise<Webhook | null>;
  /** A tenant's endpoints, oldest first. */
  listWebhooks(tenantId: string): Promise<Webhook[]>;
  /** How many endpoints a tenant has. */
  countWebhooks(tenantId: string): Promise<number>;
  /** Replaces the stored endpoint of that id; false when there is none. */
  updateWebhook(webhook: Webhook): Promise<boolean>;
  /** Deletes the endpoint and its deliveries; false when there was none. */
  deleteWebhook(tenantId: string, id: string): Promise<boolean>;
  /** Sets (a failure, when none is set yet) or clears (a success) when the endpoint started failing. */
  setFailingSince(id: string, since: Date | null): Promise<void>;
  /** Disables an enabled endpoint (reason `failing`); false when it was not enabled. */
  disable(id: string, reason: string, at: Date): Promise<boolean>;
  /** The tenant's enabled endpoints subscribed to `type`. */
  subscribers(tenantId: string, type: WebhookEventType): Promise<Webhook[]>;

  /** Stores the deliveries; one whose id is stored already is skipped (a replayed event enqueues nothing twice). */
  enqueue(deliveries: readonly Delivery[]): Promise<void>;
  /**
   * Pending deliveries due at `now`, at most `limit`, each claimed until `leaseUntil` (its next
   * attempt moved there) so that another deliverer does not take it meanwhile.
   */
  claimDue(now: Date, leaseUntil: Date, limit: number): Promise<Delivery[]>;
  recordAttempt(id: string, record: AttemptRecord): Promise<void>;
  findDelivery(webhookId: string, id: string): Promise<Delivery | null>;
  /** A webhook's deliveries, newest first, after `after`. */
  listDeliveries(webhookId: string, after: DeliveryPosition | null, limit: number): Promise<Delivery[]>;
  /** Makes a delivery pending again, due at `now`, with its attempts kept (a redelivery). */
  requeue(id: string, now: Date): Promise<void>;
}

export const WEBHOOK_STORE = Symbol('WEBHOOK_STORE');

/** The topic of the platform's own events (link changes, batches): produced after a write is acknowledged. */
export interface PlatformEventSink {
  publish(events: readonly PlatformEvent[]): Promise<void>;
  close(): Promise<void>;
}

/** A member of its consumer group on that topic: the handler's promise settles before the offsets are committed. */
export interface PlatformEventSource {
  start(handler: (events: readonly PlatformEvent[]) => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

export const PLATFORM_EVENT_SINK = Symbol('PLATFORM_EVENT_SINK');
export const PLATFORM_EVENT_SOURCE = Symbol('PLATFORM_EVENT_SOURCE');

/** What a POST to a receiver answered; `error` when no answer came (refused, timed out, SSRF check). */
export interface SendResult {
  readonly statusCode: number | null;
  readonly error: string | null;
}

/**
 * Posts a signed body to a receiver, connecting only to an address it resolved and checked itself
 * (docs/design.md, "Webhooks": no DNS rebinding between the check and the connection).
 */
export interface WebhookTransport {
  post(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<SendResult>;
}

export const WEBHOOK_TRANSPORT = Symbol('WEBHOOK_TRANSPORT');

/** WebhookUrlGuard: the SSRF guard with the system resolver and WEBHOOK_ALLOW_PRIVATE (the wiring builds it). */
export const WEBHOOK_URL_GUARD = Symbol('WEBHOOK_URL_GUARD');

/** ClickEventSource: the click topic read by the webhook deliverer's own consumer group (`<KAFKA_WEBHOOK_CONSUMER_GROUP>.clicks`). */
export const WEBHOOK_CLICK_SOURCE = Symbol('WEBHOOK_CLICK_SOURCE');
