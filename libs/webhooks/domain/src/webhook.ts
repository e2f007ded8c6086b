/** What a receiver can subscribe to (docs/design.md, "Webhooks"); a name once shipped is never changed. */
export const WEBHOOK_EVENTS = [
  'link.created',
  'link.updated',
  'link.deleted',
  'link.clicked',
  'batch.completed',
  'domain.verified',
  'domain.unverified',
  'link.flagged',
  'link.broken',
  'lead.created',
  'sale.created',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** A receiver of a tenant's events. The secrets are sealed (SecretBox): never stored or shown in clear after creation. */
export interface Webhook {
  readonly id: string;
  readonly tenantId: string;
  readonly url: string;
  readonly events: readonly WebhookEventType[];
  readonly description: string;
  readonly enabled: boolean;
  /** Why it was disabled by the platform (`failing`), or null. */
  readonly disabledReason: string | null;
  readonly secret: string;
  /** The secret before the last rotation, still signing until `previousSecretUntil`. */
  readonly previousSecret: string | null;
  readonly previousSecretUntil: Date | null;
  /** Since when every attempt failed (null after a success): 3 days of it disables the endpoint. */
  readonly failingSince: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** One event of the platform, as the bus carries it: `id` is stable across redeliveries of the bus. */
export interface PlatformEvent {
  readonly id: string;
  readonly type: WebhookEventType;
  readonly tenantId: string;
  /** Epoch ms. */
  readonly at: number;
  readonly data: Readonly<Record<string, unknown>>;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/**
 * One message to one endpoint, with its attempts. `id` is the `webhook-id` header: the same on every
 * attempt and redelivery, so an idempotent receiver applies it once.
 */
export interface Delivery {
  readonly id: string;
  readonly webhookId: string;
  readonly tenantId: string;
  readonly eventType: WebhookEventType;
  /** The JSON body, exactly as signed. */
  readonly payload: string;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly lastError: string | null;
  readonly lastStatusCode: number | null;
  /** When the next attempt is due; null once succeeded or given up. */
  readonly nextAttemptAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}
