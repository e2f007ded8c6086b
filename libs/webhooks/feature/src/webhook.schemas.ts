import { z } from 'zod';
import 'zod-openapi';
import { WEBHOOK_EVENTS } from '@shortlink/webhooks-domain';

/** Wire shapes of the webhooks API (docs/design.md, "Webhooks"). */
const instant = () => z.string().meta({ format: 'date-time' });
const eventList = z
  .array(z.string().max(32))
  .min(1)
  .max(WEBHOOK_EVENTS.length)
  .meta({ description: `Any of ${WEBHOOK_EVENTS.join(', ')}`, example: ['link.created', 'link.clicked'] });

export const webhookSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENTS)),
    description: z.string(),
    enabled: z.boolean(),
    disabledReason: z.string().nullable().meta({ description: '`failing`: every attempt failed for WEBHOOK_DISABLE_AFTER_MS (3 days); `by-owner`' }),
    failingSince: instant().nullable(),
    previousSecretValidUntil: instant().nullable().meta({ description: 'After a rotation: until when the old secret still signs beside the new one' }),
    createdAt: instant(),
    updatedAt: instant(),
  })
  .meta({ id: 'Webhook' });

export const webhookCreationSchema = z
  .strictObject({
    url: z.string().max(2048).meta({ example: 'https://hooks.example.com/shortlink' }),
    events: eventList,
    description: z.string().max(1000).optional(),
  })
  .meta({ id: 'WebhookCreation' });

export const webhookEditSchema = z
  .strictObject({
    url: z.string().max(2048),
    events: eventList,
    description: z.string().max(1000),
    enabled: z.boolean().meta({ description: 'true re-enables an endpoint the platform disabled' }),
  })
  .partial()
  .meta({ id: 'WebhookEdit' });

export const webhookCreatedSchema = z
  .object({
    id: z.string(),
    secret: z.string().meta({ description: 'The signing secret (`whsec_…`, Standard Webhooks): shown this once' }),
    webhook: webhookSchema,
  })
  .meta({ id: 'WebhookCreated' });

export const secretRotatedSchema = z
  .object({
    secret: z.string().meta({ description: 'The new signing secret: shown this once' }),
    previousSecretValidUntil: instant().meta({ description: 'The old secret signs beside the new one until then (24 h)' }),
  })
  .meta({ id: 'WebhookSecretRotated' });

export const deliverySchema = z
  .object({
    id: z.string().meta({ description: 'The `webhook-id` header: the same on every attempt and redelivery' }),
    eventType: z.enum(WEBHOOK_EVENTS),
    status: z.enum(['pending', 'succeeded', 'failed']),
    attempts: z.number().int(),
    lastStatusCode: z.number().int().nullable(),
    lastError: z.string().nullable(),
    nextAttemptAt: instant().nullable(),
    createdAt: instant(),
    updatedAt: instant(),
    payload: z.unknown().meta({ description: 'The body as sent: `{type, timestamp, data}`' }),
  })
  .meta({ id: 'WebhookDelivery' });

export const webhookListSchema = z.object({ webhooks: z.array(webhookSchema) }).meta({ id: 'WebhookList' });
export const deliveryPageSchema = z.object({ deliveries: z.array(deliverySchema), nextCursor: z.string().nullable() }).meta({ id: 'WebhookDeliveryPage' });

const id = z.string().min(1).max(64);
export const webhookParams = z.strictObject({ id });
export const deliveryParams = z.strictObject({ id, deliveryId: id });
export const deliveryQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(128).optional().meta({ description: 'nextCursor of the previous page' }),
});
