import { z } from 'zod';
import 'zod-openapi';

/** Wire shapes of the audit log (docs/design.md, "Audit log"). */
const value = z.unknown().meta({ description: 'A field’s value (text, number, boolean, list or object); long values are cut to 500 characters ending in …' });

const auditActorSchema = z
  .object({
    type: z.enum(['key', 'person', 'operator', 'system']),
    id: z.string(),
    name: z.string().meta({ description: 'The key’s name, the person’s email' }),
    onBehalfOf: z
      .object({ id: z.string(), name: z.string() })
      .nullable()
      .meta({ description: 'For a key: the person it acted for (member id and email), its maker or whom an owner transferred it to; null otherwise' }),
  })
  .meta({ id: 'AuditActor' });

const auditTargetSchema = z
  .object({
    type: z.string().meta({ description: 'link, links (a batch or bulk change), key, member, session, tenant, domain, webhook' }),
    id: z.string().nullable().meta({ description: 'The link’s code, the key’s, member’s or tenant’s id; null for several links' }),
    domain: z.string().nullable(),
  })
  .meta({ id: 'AuditTarget' });

export const auditEntrySchema = z
  .object({
    id: z.string(),
    at: z.string().meta({ format: 'date-time' }),
    action: z.string().meta({ description: 'Stable dotted name, e.g. link.created, link.bulk_deleted, key.revoked, key.transferred, tenant.plan_changed' }),
    actor: auditActorSchema,
    target: auditTargetSchema,
    clientAddress: z.string().nullable().meta({ description: 'The client’s address as the API saw it (X-Forwarded-For believed only from TRUSTED_PROXIES)' }),
    changes: z
      .record(z.string(), z.object({ from: value.optional(), to: value }))
      .nullable()
      .meta({ description: 'What changed, field → {from, to} (a bulk edit: to only); never a secret (a password change is details.passwordChanged)' }),
    details: z.record(z.string(), value).nullable().meta({ description: 'Facts beside the diff: count and failed for batch and bulk changes, names, scopes' }),
  })
  .meta({ id: 'AuditEntry' });

export const auditPageSchema = z.object({ entries: z.array(auditEntrySchema), nextCursor: z.string().nullable() }).meta({ id: 'AuditPage' });

const instant = z.string().max(64).meta({ description: 'ISO 8601 date or date-time with a zone', example: '2026-12-03T10:00:00Z' });

export const auditQuery = z.strictObject({
  actor: z.string().min(1).max(64).optional().meta({ description: 'The actor’s id (a key’s id)' }),
  action: z
    .string()
    .max(65)
    .regex(/^[a-z_]{1,32}(\.[a-z_]{1,32})?$/, 'must be an action such as link.created, or a family such as link')
    .optional()
    .meta({ description: 'An action (link.created), or every action of a family (link)' }),
  target: z.string().min(1).max(255).optional().meta({ description: 'The target’s id: a link’s code, a key’s or tenant’s id' }),
  from: instant.optional().meta({ description: 'Entries at or after this instant' }),
  to: instant.optional().meta({ description: 'Entries before this instant' }),
  cursor: z.string().max(500).optional().meta({ description: 'nextCursor of the previous page' }),
  limit: z.coerce.number().int().min(1).max(1000).default(100).meta({ description: 'Entries per page (JSON); the CSV has every entry from the cursor on' }),
  format: z.enum(['json', 'csv']).default('json').meta({ description: 'csv: text/csv, every entry the filters select (not one page)' }),
});

export const auditCsvSchema = z.string().meta({
  description:
    'at,action,actor_type,actor_id,actor_name,on_behalf_of_id,on_behalf_of_name,target_type,target_id,target_domain,client_address,changes,details,id; changes and details as JSON; cells a spreadsheet would run as formulas start with an apostrophe',
});
