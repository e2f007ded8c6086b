import { z } from 'zod';
import 'zod-openapi';
import { ROLES } from '@shortlink/people-domain';

/** Wire shapes of a member and an invitation (docs/design.md, "People and sessions"); the admin API's tenant creation answers one too. */
export const role = z
  .enum(ROLES)
  .meta({ description: 'owner and admin: members, keys, links, analytics, the audit log; editor: links and analytics; viewer: read links and analytics' });
export const dateTime = z.string().meta({ format: 'date-time' });

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

export const invitationSchema = z
  .object({
    token: z.string().meta({ description: 'The invitation token: shown this once, only its hash is stored' }),
    url: z.string().meta({ description: 'Where the person chooses a password (the token in its fragment)' }),
    expiresAt: dateTime,
    mailed: z.boolean().meta({ description: 'Whether the invitation was handed to the SMTP server (SMTP_URL)' }),
  })
  .meta({ id: 'Invitation' });

export const invitedSchema = z.object({ member: memberSchema, invitation: invitationSchema }).meta({ id: 'Invited' });
