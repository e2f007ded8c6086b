import { z } from 'zod';
import 'zod-openapi';
import { dateTime, memberSchema } from '@shortlink/nest-platform';

/** Wire shapes of an invitation (docs/design.md, "People and sessions"); a member's, shared with every app that signs people in, are nest-platform's. */
export { dateTime, memberSchema, role } from '@shortlink/nest-platform';

export const invitationSchema = z
  .object({
    token: z.string().meta({ description: 'The invitation token: shown this once, only its hash is stored' }),
    url: z.string().meta({ description: 'Where the person chooses a password (the token in its fragment)' }),
    expiresAt: dateTime,
    mailed: z.boolean().meta({ description: 'Whether the invitation was handed to the SMTP server (SMTP_URL)' }),
  })
  .meta({ id: 'Invitation' });

export const invitedSchema = z.object({ member: memberSchema, invitation: invitationSchema }).meta({ id: 'Invited' });
