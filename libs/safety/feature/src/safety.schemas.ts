import { z } from 'zod';
import { MODERATION_ACTIONS, REPORT_REASONS } from '@shortlink/safety-domain';

const at = () => z.string().meta({ format: 'date-time' });

export const verdictSchema = z.object({
  state: z.enum(['flagged', 'banned']),
  reason: z.string(),
  source: z.string().meta({ description: '`feed:<format>` or `web-risk`' }),
  at: at(),
});

export const reportSchema = z
  .object({
    id: z.string(),
    reason: z.enum(REPORT_REASONS),
    details: z.string().nullable(),
    at: at(),
  })
  .meta({ id: 'AbuseReport' });

/** An item of the operators' queue: the link as it is now, and why it is there. */
export const moderationItemSchema = z
  .object({
    code: z.string(),
    domain: z.string(),
    tenantId: z.string(),
    state: z.enum(['open', 'resolved']),
    openedAt: at(),
    updatedAt: at(),
    reports: z.object({ count: z.number().int(), lastAt: at().nullable(), latest: z.array(reportSchema) }),
    hit: verdictSchema.nullable().meta({ description: 'The last verdict of a threat feed or Web Risk that changed the link' }),
    link: z
      .object({
        url: z.string(),
        status: z.enum(['active', 'disabled', 'expired']),
        moderation: z.object({ state: z.enum(['clear', 'flagged', 'banned']), reason: z.string().nullable(), source: z.string().nullable() }),
        health: z
          .object({
            state: z.enum(['ok', 'broken']),
            since: at(),
            brokenTargets: z.array(z.string()),
            lastStatus: z.number().int().nullable(),
            lastError: z.string().nullable(),
            lastCheckedAt: at(),
          })
          .nullable(),
        tenantSuspended: z.boolean(),
      })
      .nullable()
      .meta({ description: 'null: the link is gone' }),
    resolution: z
      .object({ action: z.enum(MODERATION_ACTIONS), reason: z.string().nullable(), by: z.string(), at: at() })
      .nullable()
      .meta({ description: 'What an operator did, once resolved' }),
  })
  .meta({ id: 'ModerationItem' });

export const moderationQueueSchema = z.object({ items: z.array(moderationItemSchema), nextCursor: z.string().nullable() }).meta({ id: 'ModerationQueue' });

export const queueQuery = z.strictObject({
  state: z.enum(['open', 'resolved']).default('open'),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(500).optional().meta({ description: 'nextCursor of the previous page' }),
});

export const moderationCodeParams = z.strictObject({ code: z.string().max(64).meta({ description: 'The short code or alias' }) });
export const moderationDomainQuery = z.strictObject({
  domain: z.string().max(253).optional().meta({ description: 'The link’s domain when it is not the default one' }),
});

export const moderationActionBody = z
  .strictObject({
    action: z
      .enum(MODERATION_ACTIONS)
      .meta({ description: 'clear: back to normal; flag: a warning page first; ban: 451 with a page; suspend-tenant: every link of its tenant answers 403' }),
    reason: z.string().max(500).nullable().optional().meta({ description: 'Required but for clear; visitors of a flagged or banned link see it' }),
  })
  .meta({ id: 'ModerationAction' });

export const reportListSchema = z.object({ reports: z.array(reportSchema) }).meta({ id: 'AbuseReports' });

export const brokenLinkSettingsSchema = z
  .object({
    mode: z.enum(['target', 'page', 'url']).meta({
      description: 'Where visitors of a link whose target the checks found broken go: the target all the same (default), a page that says so, or `url`',
    }),
    url: z.string().nullable(),
    version: z.number().int().meta({ description: 'Also the ETag' }),
    updatedAt: at().nullable(),
  })
  .meta({ id: 'BrokenLinkSettings' });

export const brokenLinkSettingsBody = z
  .strictObject({ mode: z.enum(['target', 'page', 'url']), url: z.string().max(4096).nullable().optional() })
  .meta({ id: 'BrokenLinkSettingsEdit' });

export const settingsIfMatchHeader = z.object({ 'if-match': z.string().optional().meta({ description: 'The ETag you read; changed settings answer 412' }) });

/** A visitor's report (`POST /r/report`). */
export const reportBody = z
  .object({
    code: z.string().min(1).max(64),
    domain: z.string().min(1).max(253).optional().meta({ description: 'The short domain; default DEFAULT_DOMAIN' }),
    reason: z.enum(REPORT_REASONS),
    details: z.string().max(4000).optional().meta({ description: 'At most 1000 characters once control characters are removed' }),
  })
  .strict();

export const reportReceiptSchema = z.object({ status: z.enum(['accepted', 'duplicate']) }).meta({ id: 'ReportReceipt' });
