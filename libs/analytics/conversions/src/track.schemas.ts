import { z } from 'zod';
import 'zod-openapi';
import { CONVERSION_LIMITS } from '@shortlink/clicks-domain';

/** Wire shapes of the track API (docs/analytics.md, "Conversions"); the domain checks the values. */
const metadata = z.record(z.string(), z.unknown()).meta({
  description: 'Your own JSON object (CONVERSION_METADATA_MAX_BYTES of JSON at most, 2048 by default); we store no names or e-mails unless you send them here',
});
const customerId = z
  .string()
  .max(1000)
  .meta({ description: 'Your own opaque id of the customer', maxLength: CONVERSION_LIMITS.customerId, example: 'cus_8Kq2' });
const eventName = z.string().max(1000).meta({ maxLength: CONVERSION_LIMITS.eventName, example: 'Sign up' });

export const leadSchema = z
  .strictObject({
    clickId: z.string().max(100).meta({
      description: 'The click id the redirect passed to your site (query parameter `sl_cid` unless the link names another)',
      example: 'q3Jm0c2Z7yZ4fC1dX9bA2w',
    }),
    eventName,
    customerId,
    metadata: metadata.optional(),
  })
  .meta({ id: 'LeadReport' });

export const saleSchema = z
  .strictObject({
    customerId,
    amount: z.number().int().meta({ description: "In the currency's minor unit (cents); negative: a refund", example: 4900 }),
    currency: z.string().max(3).meta({ description: 'ISO 4217', example: 'EUR', minLength: 3 }),
    eventName: eventName.meta({ example: 'Purchase' }),
    invoiceId: z
      .string()
      .max(1000)
      .optional()
      .meta({ description: 'Makes the sale idempotent: a second report of this invoice counts nothing', maxLength: CONVERSION_LIMITS.invoiceId }),
    metadata: metadata.optional(),
  })
  .meta({ id: 'SaleReport' });

export const trackedSchema = z
  .object({
    duplicate: z.boolean().meta({ description: 'Counted before (the same customer’s lead, the same invoice): nothing was counted now' }),
    event: z
      .object({
        id: z.string(),
        kind: z.enum(['lead', 'sale']),
        link: z.object({ domain: z.string(), code: z.string() }),
        customerId: z.string(),
        eventName: z.string(),
        clickId: z.string(),
        amount: z.number().int(),
        currency: z.string(),
        invoiceId: z.string().nullable(),
        at: z.string().meta({ format: 'date-time' }),
      })
      .nullable()
      .meta({ description: 'What was counted; null for a duplicate' }),
  })
  .meta({ id: 'Tracked' });

export const conversionSettingsSchema = z
  .strictObject({
    attribution: z.enum(['first', 'last']).meta({
      description:
        'Which link a customer’s sales go to: `first`, the link of its first lead (the default), or `last`, of its latest click reported in a lead (a newer click of a known customer moves it; no lead is counted again)',
    }),
  })
  .meta({ id: 'ConversionSettings' });
