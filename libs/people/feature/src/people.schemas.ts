import { z } from 'zod';
import 'zod-openapi';
import { ROLES } from '@shortlink/people-domain';
import { dateTime, memberSchema } from '@shortlink/nest-platform';

export { invitedSchema, memberSchema } from '@shortlink/nest-platform';

/** Wire shapes of members, invitations, sign-in and sessions (docs/design.md, "People and sessions"). */
export const inviteBody = z
  .strictObject({
    email: z.string().max(320).meta({ example: 'ana@example.com' }),
    role: z
      .string()
      .max(16)
      .meta({ description: ROLES.join(', ') }),
  })
  .meta({ id: 'MemberInvitation' });
export const roleBody = z
  .strictObject({
    role: z
      .string()
      .max(16)
      .meta({ description: ROLES.join(', ') }),
  })
  .meta({ id: 'MemberRoleChange' });
export const memberParams = z.strictObject({ id: z.string().min(1).max(64) });
export const memberListSchema = z.object({ members: z.array(memberSchema) }).meta({ id: 'Members' });

export const acceptBody = z
  .strictObject({
    token: z.string().max(200),
    password: z.string().max(1024).meta({ description: 'At least PASSWORD_MIN_LENGTH characters, not a common password' }),
  })
  .meta({ id: 'InvitationAcceptance' });
export const acceptedSchema = z
  .object({
    member: memberSchema,
    csrfToken: z.string().nullable().meta({ description: 'The new session’s CSRF token; null when the tenant is suspended (not signed in)' }),
    expiresAt: dateTime.nullable().meta({ description: 'The session’s absolute end; null when not signed in' }),
  })
  .meta({ id: 'Accepted' });
export const invitationBody = z.strictObject({ token: z.string().max(200) }).meta({ id: 'InvitationToken' });
export const invitationSchema = z
  .object({
    email: z.string(),
    role: z.enum(ROLES),
    tenant: z.object({ name: z.string() }),
    expiresAt: dateTime,
    passwordMinLength: z.number().int().meta({ description: 'The fewest characters the password may have (PASSWORD_MIN_LENGTH)' }),
  })
  .meta({ id: 'InvitationDetails' });
export { loginBody, meSchema, signedInSchema } from '@shortlink/nest-platform';

export const enrolmentSchema = z
  .object({
    secret: z.string().meta({ description: 'The TOTP secret (base32), for an authenticator app that cannot scan' }),
    uri: z.string().meta({ description: 'otpauth:// URI, to show as a QR code' }),
  })
  .meta({ id: 'SecondFactorEnrolment' });
export const secondFactorStatusSchema = z
  .object({
    enabled: z.boolean().meta({ description: 'Sign-in asks for a code (or a recovery code)' }),
    pending: z.boolean().meta({ description: 'A new secret waits for its confirming code (POST /api/v1/me/second-factor/confirm)' }),
  })
  .meta({ id: 'SecondFactorStatus' });
export const codeBody = z
  .strictObject({ code: z.string().max(16).meta({ description: '6 digits of the authenticator app' }) })
  .meta({ id: 'SecondFactorCode' });
export const recoveryCodesSchema = z
  .object({ recoveryCodes: z.array(z.string()).meta({ description: 'Shown this once; each works once instead of a code' }) })
  .meta({ id: 'RecoveryCodes' });
export const proofBody = z
  .strictObject({ code: z.string().max(16).optional(), recoveryCode: z.string().max(32).optional() })
  .meta({ id: 'SecondFactorProof', description: 'A current code, or a recovery code' });
export const passwordChangeBody = z
  .strictObject({
    currentPassword: z.string().max(1024),
    newPassword: z.string().max(1024).meta({ description: 'At least PASSWORD_MIN_LENGTH characters, not a common password' }),
  })
  .meta({ id: 'PasswordChange' });
export const passwordChangedSchema = z
  .object({ sessionsEnded: z.number().int().meta({ description: 'Your other sessions, ended (this one stays)' }) })
  .meta({ id: 'PasswordChanged' });
export const sessionListSchema = z
  .object({
    sessions: z.array(
      z.object({
        id: z.string().meta({ description: 'The stored hash of the session id (never the cookie’s value)' }),
        createdAt: dateTime,
        lastSeenAt: dateTime.meta({ description: 'Last use, written at most once a minute' }),
        expiresAt: dateTime,
        current: z.boolean().meta({ description: 'The session making this request' }),
        client: z
          .object({
            device: z.string().nullable().meta({ description: 'mobile, tablet, desktop, bot or other' }),
            browser: z.string().nullable(),
            os: z.string().nullable(),
            country: z.string().nullable().meta({ description: 'ISO 3166-1 alpha-2' }),
            region: z.string().nullable(),
            city: z.string().nullable().meta({ description: 'With GEO_DATABASE=city only' }),
          })
          .nullable()
          .meta({ description: 'What it was signed in from (its user agent, the approximate place of its address); null when not known' }),
      }),
    ),
  })
  .meta({ id: 'Sessions' });
export const sessionParams = z.strictObject({ id: z.string().min(1).max(64) });
