import { z } from 'zod';
import 'zod-openapi';
import { dateTime } from '@shortlink/nest-platform';

/** Wire shapes of single sign-on (docs/design.md, "Single sign-on"). */
export const ssoBody = z
  .strictObject({
    issuer: z
      .string()
      .max(2048)
      .meta({ description: 'The provider’s issuer URL (https; http only with SSO_ALLOW_INSECURE_ISSUERS)', example: 'https://accounts.example.com' }),
    clientId: z.string().max(255),
    clientSecret: z
      .string()
      .max(1024)
      .optional()
      .meta({ description: 'Required the first time; left out, the stored secret stays. Sealed at rest, never answered' }),
    allowedDomains: z
      .array(z.string().max(253))
      .max(50)
      .meta({ description: 'Email domains that may sign in (the provider’s verified email)', example: ['example.com'] }),
    defaultRole: z.string().max(16).optional().meta({ description: 'admin, editor or viewer (default): the role of a person created by a first sign-in' }),
  })
  .meta({ id: 'SsoConfiguration' });

export const ssoSchema = z
  .object({
    issuer: z.string(),
    clientId: z.string(),
    clientSecretSet: z.literal(true).meta({ description: 'A secret is stored (it is never answered)' }),
    allowedDomains: z.array(z.string()),
    defaultRole: z.enum(['admin', 'editor', 'viewer']),
    callbackUrl: z.string().meta({ description: 'The redirect URI to register with the provider (SSO_CALLBACK_URL)' }),
    startUrl: z.string().meta({ description: 'Where people of this tenant begin signing in' }),
    createdAt: dateTime,
    updatedAt: dateTime,
  })
  .meta({ id: 'Sso' });

export const ssoStartParams = z.strictObject({ tenant: z.string().min(1).max(64).meta({ description: 'The tenant’s id' }) });

export const ssoCallbackQuery = z
  .looseObject({
    code: z.string().max(2048).optional(),
    state: z.string().max(512).optional(),
    error: z.string().max(200).optional(),
    error_description: z.string().max(1000).optional(),
    iss: z.string().max(2048).optional(),
  })
  .meta({ description: 'What the provider adds to the redirect URI' });
