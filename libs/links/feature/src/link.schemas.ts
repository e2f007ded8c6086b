import { z } from 'zod';
import 'zod-openapi';
import { ALIAS_PATTERN, LINK_LIMITS as LIMITS, RULE_BROWSERS, RULE_DEVICES, RULE_LIMITS, RULE_SYSTEMS } from '@shortlink/links-domain';

/**
 * The wire shapes of the link API (docs/design.md, "Contract"): JSON types and unknown-field
 * refusal here; the meaning (URL policy, limits, expiry in the future) is checked by the links
 * domain, which answers with its own stable codes (INVALID_URL, URL_NOT_ALLOWED, ...). The domain's
 * limits are published in the document (`.meta` keywords, which validate nothing here), so that a
 * generated example is a request the server accepts.
 */
const url = z.string().max(24_576).meta({ description: 'http(s) URL; at most 2048 characters once normalised', example: 'https://example.com/spring-sale' });
const nullable = <T extends z.ZodType>(schema: T) => schema.nullable();

const utm = z
  .strictObject({
    source: z.string().max(LIMITS.utmValue),
    medium: z.string().max(LIMITS.utmValue),
    campaign: z.string().max(LIMITS.utmValue),
    term: z.string().max(LIMITS.utmValue),
    content: z.string().max(LIMITS.utmValue),
  })
  .partial()
  .meta({ id: 'Utm', description: 'Added to the target as utm_* parameters; these win over the same names in the target URL' });
const geoTargets = z.record(z.string().max(8).meta({ pattern: '^[A-Za-z]{2}$' }), url).meta({
  description: 'ISO 3166-1 alpha-2 country code -> URL: shorthand for redirect rules of one country condition each (replaces those in place)',
  maxProperties: LIMITS.geoTargets,
  example: { DE: 'https://example.de/', US: 'https://example.com/us' },
});
const deviceTargets = z
  .strictObject({ ios: url, android: url, desktop: url })
  .partial()
  .meta({ id: 'DeviceTargets', description: 'Shorthand for redirect rules of one device condition each (replaces those in place)' });
const social = z
  .strictObject({
    title: z.string().max(1000).meta({ description: 'og:title and twitter:title', minLength: 1, maxLength: LIMITS.socialTitle }),
    description: z.string().max(2000).nullable().optional().meta({ description: 'og:description', maxLength: LIMITS.socialDescription }),
    image: url.nullable().optional().meta({ description: 'http(s) URL of the image, through the URL policy like every target; og:image' }),
  })
  .meta({
    id: 'Social',
    description:
      'The card unfurling bots (Slackbot, Twitterbot, facebookexternalhit, LinkedInBot, Discordbot, WhatsApp, TelegramBot, …) get instead of the redirect',
  });
const appTarget = z.string().max(8192).meta({
  description:
    'An app URL scheme (myapp://product/42; javascript:, data:, file:, blob:, about:, intent: and the like are refused) or an https universal link / app link (through the URL policy)',
  example: 'myapp://product/42',
});
const appTargets = z.strictObject({ ios: appTarget.nullable(), android: appTarget.nullable() }).partial().meta({
  id: 'AppTargets',
  description:
    "The app to open on iOS and Android, with the link's target (or its device target) as the fallback: a browser on that device gets a page offering the app and leading to the fallback after a few seconds (an app URL scheme), or a 302 to the universal link / app link (https); any other client gets the fallback's 302",
});
const ruleValue = (description: string, more: Record<string, unknown> = {}) =>
  z
    .string()
    .max(1000)
    .meta({ description, ...more });
const condition = z
  .discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('language'),
      value: ruleValue('The visitor accepts this language with a quality of at least 0.9 (Accept-Language): `de` takes every German, `de-AT` only that one', {
        example: 'de',
      }),
    }),
    z.strictObject({
      type: z.literal('query-param'),
      name: z.string().max(1000).meta({ description: 'The parameter’s name, decoded', maxLength: RULE_LIMITS.name }),
      value: ruleValue('Absent: the parameter is present with any value; given: one occurrence equals it (`""`: present without a value)', {
        maxLength: RULE_LIMITS.value,
      }).optional(),
    }),
    z.strictObject({
      type: z.literal('ip-address'),
      value: ruleValue('The client address: an address, a CIDR block, or an IPv4 pattern with * octets', { example: '192.168.0.0/16' }),
    }),
    z.strictObject({ type: z.literal('before-date'), value: ruleValue('Now is before this instant (ISO 8601 with a zone)', { format: 'date-time' }) }),
    z.strictObject({ type: z.literal('after-date'), value: ruleValue('Now is after this instant (ISO 8601 with a zone)', { format: 'date-time' }) }),
    z.strictObject({
      type: z.literal('device'),
      value: ruleValue('ios, android, mobile (either), desktop (every other platform)', { enum: [...RULE_DEVICES] }),
    }),
    z.strictObject({ type: z.literal('os'), value: ruleValue('The operating system family', { enum: [...RULE_SYSTEMS] }) }),
    z.strictObject({ type: z.literal('browser'), value: ruleValue('The browser', { enum: [...RULE_BROWSERS] }) }),
    z.strictObject({ type: z.literal('country'), value: ruleValue('ISO 3166-1 alpha-2, from the IP database', { pattern: '^[A-Za-z]{2}$', example: 'DE' }) }),
    z.strictObject({
      type: z.literal('region'),
      value: ruleValue('First-level subdivision in the IP database’s spelling, without case (needs GEO_DATABASE=city)', { example: 'Bavaria' }),
    }),
    z.strictObject({
      type: z.literal('city'),
      value: ruleValue('City in the IP database’s spelling, without case (needs GEO_DATABASE=city)', { example: 'Munich' }),
    }),
  ])
  .meta({ id: 'RedirectCondition' });
const redirectRule = z
  .strictObject({
    url,
    conditions: z.array(condition).max(100).meta({ minItems: 1, maxItems: RULE_LIMITS.conditions, description: 'All must hold' }),
  })
  .meta({ id: 'RedirectRule' });
const redirectRules = z
  .array(redirectRule)
  .max(1000)
  .meta({
    description:
      "Targets by conditions on the request, in order: the first rule whose conditions all hold wins, else the link's url (or its variants). geoTargets and deviceTargets are shorthand for rules of one country or device condition",
    maxItems: RULE_LIMITS.rules,
    example: [{ url: 'https://example.com/es', conditions: [{ type: 'language', value: 'es' }] }],
  });
const variant = z.strictObject({ url, weight: z.number().int().meta({ minimum: 1, maximum: LIMITS.variantWeight }) }).meta({ id: 'Variant' });

const optionFields = {
  redirectType: z.union([z.literal(301), z.literal(302)]).meta({ description: '302 by default; browsers cache a 301, hiding later clicks' }),
  expiresAt: z
    .string()
    .max(64)
    .meta({ description: 'ISO 8601 date-time with a zone; from then on the redirect answers 410', format: 'date-time', example: '2027-01-31T12:00:00Z' }),
  title: z.string().max(1000).meta({ maxLength: LIMITS.title }),
  tags: z
    .array(z.string().max(200).meta({ minLength: 1, maxLength: LIMITS.tag }))
    .max(100)
    .meta({ description: 'Letters, digits, spaces or "_ . : / -", starting with a letter or digit', maxItems: LIMITS.tags }),
  maxClicks: z.number().int().meta({ description: 'After this many redirects the link answers 410 LINK_EXHAUSTED', minimum: 1, maximum: LIMITS.maxClicks }),
  password: z.string().max(1000).meta({ description: 'Stored only as an argon2id hash', minLength: LIMITS.passwordMin, maxLength: LIMITS.passwordMax }),
  utm,
  forwardQuery: z.boolean().meta({ description: "Carry the visitor's query string to the target (default true)" }),
  redirectRules,
  geoTargets,
  deviceTargets,
  variants: z
    .array(variant)
    .max(100)
    .meta({ description: 'Weighted targets for an A/B test; a visitor always gets the same one', minItems: 1, maxItems: LIMITS.variants }),
  clicksPerIpPerMinute: z
    .number()
    .int()
    .meta({ description: 'Redirects per visitor address and minute on this link', minimum: 1, maximum: LIMITS.clicksPerIpPerMinute }),
  crawlable: z.boolean().meta({ description: "Let crawlers fetch this link although its domain's robots.txt disallows (default false)" }),
  social,
  appTargets,
  trackConversions: z.boolean().meta({
    description:
      'Give each click a click id (unguessable, no personal data), passed to the target as the query parameter conversionParam, for POST /api/v1/track/lead (default false)',
  }),
  conversionParam: z.string().max(40).meta({
    description: 'The query parameter that carries the click id (default sl_cid): a letter, then letters, digits or "_ . -"',
    pattern: '^[A-Za-z][A-Za-z0-9_.-]{0,39}$',
    example: 'sl_cid',
  }),
  passwordRememberHours: z.number().int().meta({
    description: 'Hours a visitor who gave the right password is let through without the form (a signed cookie for this link); 0: ask every visit; default 12',
    minimum: 0,
    maximum: LIMITS.passwordRememberHours,
  }),
};

/** What an import carries over from another installation or shortener (docs/design.md, "Import and export"). */
const importFields = {
  legacyCode: z.string().max(200).meta({
    description:
      'Instead of alias, for imports: the source’s code kept as it was, 1-64 characters, segments of A-Z a-z 0-9 _ - joined by "/" (`1`, `blog/2024/launch`); not a reserved path',
  }),
  status: z.enum(['active', 'disabled']).meta({ description: 'active by default; an import keeps a disabled link disabled' }),
  passwordHash: z.string().max(512).meta({
    description:
      'Instead of password, for imports: the argon2id hash an export gave ($argon2id$v=19$m=…,t=…,p=…$salt$hash, bounded cost); never the password itself',
  }),
};

export const linkCreationSchema = z
  .strictObject({
    url,
    alias: z.string().max(200).meta({ description: 'Instead of a generated code', minLength: 3, maxLength: 64, pattern: ALIAS_PATTERN.source }),
    domain: z.string().max(253).meta({ description: 'The default domain, or one of your own' }),
    ...optionFields,
    ...importFields,
  })
  .partial({
    alias: true,
    domain: true,
    redirectType: true,
    expiresAt: true,
    title: true,
    tags: true,
    maxClicks: true,
    password: true,
    utm: true,
    forwardQuery: true,
    redirectRules: true,
    geoTargets: true,
    deviceTargets: true,
    variants: true,
    clicksPerIpPerMinute: true,
    crawlable: true,
    passwordRememberHours: true,
    social: true,
    appTargets: true,
    trackConversions: true,
    conversionParam: true,
    legacyCode: true,
    status: true,
    passwordHash: true,
  })
  .meta({ id: 'LinkCreation' });

/** Every field optional; null clears an option (code and domain never change). */
export const linkEditSchema = z
  .strictObject({
    url,
    status: z.enum(['active', 'disabled']),
    ...Object.fromEntries(Object.entries(optionFields).map(([k, v]) => [k, nullable(v)])),
  })
  .partial()
  .meta({ id: 'LinkEdit' });

export const linkSchema = z
  .object({
    code: z.string(),
    domain: z.string(),
    shortUrl: z.string(),
    url: z.string(),
    title: z.string().nullable(),
    tags: z.array(z.string()),
    createdAt: z.string().meta({ format: 'date-time' }),
    updatedAt: z.string().meta({ format: 'date-time' }),
    expiresAt: z.string().nullable().meta({ format: 'date-time' }),
    status: z.enum(['active', 'disabled', 'expired']),
    redirectType: z.union([z.literal(301), z.literal(302)]),
    version: z.number().int().meta({ description: 'Also the ETag; send it back as If-Match to edit safely' }),
    maxClicks: z.number().int().nullable(),
    passwordProtected: z.boolean(),
    utm: utm.nullable(),
    forwardQuery: z.boolean(),
    geoTargets: geoTargets.nullable(),
    deviceTargets: deviceTargets.nullable(),
    redirectRules: z.array(redirectRule).nullable(),
    variants: z.array(variant).nullable(),
    clicksPerIpPerMinute: z.number().int().nullable(),
    crawlable: z.boolean().meta({ description: "Listed as allowed in its domain's robots.txt" }),
    passwordRememberHours: z.number().int().nullable().meta({ description: 'null: the default, 12 h' }),
    social: z.object({ title: z.string(), description: z.string().nullable(), image: z.string().nullable() }).nullable(),
    appTargets: z.object({ ios: z.string(), android: z.string() }).partial().nullable(),
    trackConversions: z.boolean().meta({ description: 'Each click gets a click id for conversions' }),
    conversionParam: z.string().meta({ description: 'The query parameter of the click id' }),
    moderation: z
      .object({
        state: z.enum(['clear', 'flagged', 'banned']),
        reason: z.string().nullable(),
        source: z.string().nullable().meta({
          description:
            'Who decided: `url-policy` (its own rules), `feed:<format>` (a threat feed), `web-risk`, `operator`; null: nobody, the link is clear as made',
        }),
      })
      .meta({ description: 'flagged: visitors see a warning page first; banned: a blocked page' }),
    health: z
      .object({
        state: z.enum(['ok', 'broken']),
        since: z.string().meta({ format: 'date-time', description: 'When the link entered this state' }),
        brokenTargets: z.array(z.string()).meta({ description: 'The targets that do not answer; their visitors meet your broken-link setting' }),
        lastStatus: z
          .number()
          .int()
          .nullable()
          .meta({ description: 'The HTTP status of the last check (of the first broken target, else of url); null when none came' }),
        lastError: z
          .string()
          .nullable()
          .meta({ description: '`timeout`, `unresolvable`, `private-address`, `connection-refused`, `redirect-loop`, `too-many-redirects`, …' }),
        lastCheckedAt: z.string().meta({ format: 'date-time' }),
      })
      .nullable()
      .meta({ description: 'What the dead-link checks found; null until the first check' }),
  })
  .meta({ id: 'Link' });

export const linkPageSchema = z.object({ links: z.array(linkSchema), nextCursor: z.string().nullable() }).meta({ id: 'LinkPage' });

/** A link as the export gives it: everything, the password as its hash (docs/design.md, "Import and export"). */
export const linkExportSchema = linkSchema
  .extend({
    passwordHash: z.string().nullable().meta({ description: 'The argon2id hash of the link’s password, for passwordHash on import; null without one' }),
  })
  .meta({ id: 'LinkExport' });
export const linkExportPageSchema = z.object({ links: z.array(linkExportSchema), nextCursor: z.string().nullable() }).meta({ id: 'LinkExportPage' });

export const codeParams = z.strictObject({ code: z.string().max(64).meta({ description: 'The short code or alias' }) });
export const domainQuery = z.strictObject({ domain: z.string().max(253).optional().meta({ description: 'The link’s domain when it is not the default one' }) });

export const listQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(500).optional().meta({ description: 'nextCursor of the previous page' }),
  q: z.string().max(200).optional().meta({ description: 'Part of the code, title or target' }),
  tag: z.string().max(50).optional(),
  status: z.enum(['active', 'disabled', 'expired']).optional(),
  domain: z.string().max(253).optional(),
  health: z.enum(['ok', 'broken', 'unchecked']).optional().meta({ description: 'Only links the dead-link checks found so (`unchecked`: not checked yet)' }),
});

export const qrQuery = z.strictObject({
  format: z.enum(['svg', 'png']).default('svg'),
  size: z.coerce.number().int().min(64).max(2048).default(256).meta({ description: 'Width and height in pixels' }),
  domain: z.string().max(253).optional(),
});

export const ifMatchHeader = z.object({ 'if-match': z.string().optional().meta({ description: 'The ETag you read; a changed link answers 412' }) });

/** An operator's moderation of a link. */
export const moderationBody = z
  .strictObject({ moderation: z.enum(['clear', 'flagged', 'banned']), reason: z.string().max(500).nullable().optional() })
  .meta({ id: 'Moderation', description: 'flagged: visitors see a warning page first; banned: 451 with a page; clear: back to normal' });
