import { z } from 'zod';
import 'zod-openapi';
import { invitedSchema, role, tenantSchema } from '@shortlink/nest-platform';
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
    scopes: z.array(scope).meta({ description: 'The scopes the key was given' }),
    activeScopes: z.array(scope).meta({
      description:
        'What the key may do now: its scopes within the role of the person it acts for (a demotion lowers them); empty while suspended. A key of no person keeps links:*, analytics:read and audit:read once the tenant has an owner',
    }),
    actsFor: z.object({ id: z.string(), email: z.string().nullable(), role: role.nullable() }).nullable().meta({
      description:
        'The member the key acts for (its maker, or whom an owner transferred it to); email and role null once that member was removed (the key is suspended). Null for a key of no person (the tenant’s first key, made by the operator)',
    }),
    status: z.enum(['active', 'suspended', 'expired', 'revoked']).meta({ description: 'suspended: the person it acted for is no longer a member' }),
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
      .meta({
        description: `Any of ${SCOPES.join(', ')}; never more than the caller has, nor than the role of the person the key will act for allows (members:write: only an owner signed in). Default: the caller's links, analytics, audit:read and keys:write scopes`,
      }),
    expiresAt: z.string().max(64).nullable().optional().meta({ description: 'ISO 8601 date-time with a zone, in the future', example: '2027-06-30T00:00:00Z' }),
  })
  .meta({ id: 'KeyCreation' });

export const keyParams = z.strictObject({ id });

export const keyTransferSchema = z
  .strictObject({ memberId: z.string().max(64).meta({ description: 'The active member the key will act for' }) })
  .meta({ id: 'KeyTransfer' });

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
    apiKey: z.string().meta({
      description:
        'The tenant’s first key, shown this once. It acts for no person: every tenant scope (members and keys too) while the tenant has no active owner, then links, analytics and the audit log only, until an owner adopts it (POST /api/v1/keys/{id}/transfer)',
    }),
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
