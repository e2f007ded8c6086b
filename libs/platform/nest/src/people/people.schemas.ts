import { z } from 'zod';
import 'zod-openapi';
import type { Member } from '@shortlink/people-domain';
import { ROLES } from '@shortlink/people-domain';
import { SCOPES, Tenant } from '@shortlink/tenants-domain';

/**
 * Wire shapes of sign-in and of who is calling, shared by every app that accepts people's sessions
 * (docs/design.md, "People and sessions"): one zod object per component, so each app's document
 * names them alike.
 */
export const role = z.enum(ROLES).meta({
  description:
    'owner and admin: members, keys, links, analytics, the audit log (an admin never touches an owner or an owner’s keys); editor: links, analytics and its own keys; viewer: read links and analytics',
});
export const dateTime = z.string().meta({ format: 'date-time' });

export const tenantSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    plan: z.enum(['free', 'paid']),
    status: z.enum(['active', 'suspended']),
    createdAt: z.string().meta({ format: 'date-time' }),
  })
  .meta({ id: 'Tenant' });

export const memberSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    role,
    status: z.enum(['invited', 'active']),
    createdAt: dateTime,
    invitationExpiresAt: dateTime.nullable(),
  })
  .meta({ id: 'Member' });

export const loginBody = z
  .strictObject({
    email: z.string().max(320),
    password: z.string().max(1024),
    tenantId: z.string().max(64).optional().meta({ description: 'Needed only when the email belongs to several tenants' }),
    code: z.string().max(16).optional().meta({ description: 'With a second factor: the 6 digits of the authenticator app (each accepted once)' }),
    recoveryCode: z.string().max(32).optional().meta({ description: 'With a second factor, instead of code: one of the recovery codes (each works once)' }),
  })
  .meta({ id: 'SignIn' });

export const meSchema = z
  .object({
    member: memberSchema.nullable().meta({ description: 'The person signed in; null for a key' }),
    key: z.object({ id: z.string(), name: z.string() }).nullable().meta({ description: 'The key used; null for a session' }),
    tenant: tenantSchema,
    role: role.nullable(),
    scopes: z.array(z.enum(SCOPES)),
    csrfToken: z
      .string()
      .nullable()
      .meta({ description: 'With a session: send it as x-csrf-token on every write made with the cookie. Null for a key (keys need none)' }),
  })
  .meta({ id: 'Me' });
export const signedInSchema = meSchema.extend({ expiresAt: dateTime.meta({ description: 'The session’s absolute end' }) }).meta({ id: 'SignedIn' });

export function tenantView(tenant: Tenant): z.infer<typeof tenantSchema> {
  return { id: tenant.id, name: tenant.name, plan: tenant.plan, status: tenant.status, createdAt: tenant.createdAt.toISOString() };
}

export function memberView(member: Member): z.infer<typeof memberSchema> {
  return {
    id: member.id,
    email: member.email,
    role: member.role,
    status: member.status,
    createdAt: member.createdAt.toISOString(),
    invitationExpiresAt: member.invitationExpiresAt?.toISOString() ?? null,
  };
}

/** Who is calling, as `GET /api/v1/me` and sign-in answer it. */
export function meView(
  member: Member | null,
  key: { id: string; name: string } | null,
  tenant: Tenant,
  scopes: readonly string[],
  csrfToken: string | null,
): z.infer<typeof meSchema> {
  return {
    member: member && memberView(member),
    key,
    tenant: tenantView(tenant),
    role: member?.role ?? null,
    scopes: [...scopes] as z.infer<typeof meSchema>['scopes'],
    csrfToken,
  };
}

/** An invitation, as the answer that made it shows it (docs/design.md, "People and sessions"). */
export const invitationSchema = z
  .object({
    token: z.string().meta({ description: 'The invitation token: shown this once, only its hash is stored' }),
    url: z.string().meta({ description: 'Where the person chooses a password (the token in its fragment)' }),
    expiresAt: dateTime,
    mailed: z.boolean().meta({ description: 'Whether the invitation was handed to the SMTP server (SMTP_URL)' }),
  })
  .meta({ id: 'Invitation' });

export const invitedSchema = z.object({ member: memberSchema, invitation: invitationSchema }).meta({ id: 'Invited' });
