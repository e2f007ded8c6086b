import { z } from 'zod';
import 'zod-openapi';
import { trackedSchema } from './track.schemas';

/** Wire shapes of the Stripe receiver (docs/stripe.md). */
export const stripeSettingsBody = z
  .strictObject({
    webhookSecret: z.string().max(256).meta({
      description: 'The signing secret Stripe shows for the webhook endpoint you created (whsec_…); sealed at rest, never answered',
      example: 'whsec_0123456789abcdefABCDEF',
    }),
  })
  .meta({ id: 'StripeSettingsInput' });

export const stripeSettingsSchema = z
  .object({
    endpointPath: z.string().meta({
      description: 'The path (on this API’s host) to give Stripe as the endpoint URL',
      example: '/api/v1/integrations/stripe?tenant=t_abc',
    }),
    events: z.array(z.string()).meta({ description: 'The events to send: the others are answered 200 and ignored' }),
    webhookSecretHint: z.string().meta({ description: 'The secret’s last four characters', example: 'whsec_…CDEF' }),
    createdAt: z.string().meta({ format: 'date-time' }),
    updatedAt: z.string().meta({ format: 'date-time' }),
  })
  .meta({ id: 'StripeSettings' });

export const stripeReceiverQuery = z.strictObject({
  tenant: z.string().min(1).max(64).meta({ description: 'Your tenant id (the `endpointPath` of `GET /api/v1/integrations/stripe` has it)' }),
});

export const stripeEventBody = z.looseObject({}).meta({
  id: 'StripeEvent',
  description:
    'A Stripe event (`id`, `type`, `data.object`, …) as Stripe sends it, verified against the Stripe-Signature header over the raw body before it is read',
});

export const stripeSignatureHeader = z.looseObject({
  'stripe-signature': z.string().optional().meta({ description: 'Stripe’s signature: `t=<time>,v1=<HMAC-SHA256>`' }),
});

export const stripeOutcomeSchema = z
  .object({
    eventId: z.string(),
    type: z.string(),
    outcome: z.enum(['counted', 'duplicate', 'ignored']),
    reason: z.string().nullable().meta({ description: 'Why nothing (or not everything) was counted' }),
    lead: trackedSchema.nullable(),
    sale: trackedSchema.nullable(),
  })
  .meta({ id: 'StripeOutcome' });
