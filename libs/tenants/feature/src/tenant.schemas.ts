import { z } from 'zod';
import 'zod-openapi';
import { invitedSchema, tenantSchema } from '@shortlink/nest-platform';
import { SCOPES } from '@shortlink/tenants-domain';

/** Wire shapes of the key and admin APIs (docs/design.md, "Tenants, keys and plans"). */
const scope = z.enum(SCOPES);
const id = z.string().min(1).max(64);

export { tenantSchema } from '@shortlink/nest-platform';

export const apiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().meta({ description: 'The first characters of the key, to recognise it; never enough to use it' }),
    scopes: z.array(scope),
    createdAt: z.string().meta({ format: 'date-time' }),
    expiresAt: z.string().meta({ format: 'date-time' }).nullable(),
    revokedAt: z.string().meta({ format: 'date-time' }).nullable(),
  })
  .meta({ id: 'ApiKey' });

export const issuedKeySchema = z
  .object({ key: apiKeySchema, apiKey: z.string().meta({ description: 'The secret: shown this once, only its hash is stored' }) })
  .meta({ id: 'IssuedKey' });

export const keyCreationSchema = z
  .strictObject({
    name: z.string().max(1000),
    scopes: z
      .array(z.string().max(64))
      .max(10)
      .optional()
      .meta({ description: `Any of ${SCOPES.join(', ')}; never more than the calling key has. Default: the caller's links and analytics scopes` }),
    expiresAt: z.string().max(64).nullable().optional().meta({ description: 'ISO 8601 date-time with a zone, in the future', example: '2027-06-30T00:00:00Z' }),
  })
  .meta({ id: 'KeyCreation' });

export const keyParams = z.strictObject({ id });

export const tenantCreationSchema = z
  .strictObject({
    name: z.string().max(1000),
    plan: z.string().max(32).meta({ description: 'free or paid' }),
    ownerEmail: z
      .string()
      .max(320)
      .optional()
      .meta({ description: 'Invite this person as the tenant’s first owner (the invitation is in the answer, and mailed with SMTP_URL)' }),
  })
  .meta({ id: 'TenantCreation' });
export const tenantCreatedSchema = z
  .object({
    tenant: tenantSchema,
    apiKey: z.string().meta({ description: 'The tenant’s first key (links and analytics scopes): shown this once' }),
    key: apiKeySchema,
    owner: invitedSchema.optional().meta({ description: 'With ownerEmail: the owner invited, and the invitation (its token shown this once)' }),
  })
  .meta({ id: 'TenantCreated' });
export const tenantEditSchema = z
  .strictObject({
    name: z.string().max(1000),
    plan: z.string().max(32),
    status: z.string().max(32).meta({ description: 'active or suspended; a suspended tenant’s keys get 403 and its links a suspended page' }),
  })
  .partial()
  .meta({ id: 'TenantEdit' });
export const tenantParams = z.strictObject({ tenantId: id });
export const tenantPageQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().max(64).optional().meta({ description: 'nextCursor of the previous page' }),
});
export const tenantPageSchema = z.object({ tenants: z.array(tenantSchema), nextCursor: z.string().nullable() }).meta({ id: 'TenantPage' });

export const domainBody = z.strictObject({ domain: z.string().max(253).meta({ example: 'links.example.com' }) });
export const domainParams = z.strictObject({ tenantId: id, domain: z.string().max(253) });
export const domainListSchema = z.object({ domains: z.array(z.string()) }).meta({ id: 'TenantDomains' });
