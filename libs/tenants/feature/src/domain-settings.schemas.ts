import { z } from 'zod';
import 'zod-openapi';

/** Wire shapes of the domain settings API (docs/design.md, "Domain settings"); the domain checks each value again. */
const target = z
  .string()
  .max(2048)
  .meta({ description: 'An http(s) URL that passes the URL policy (not one of the short domains)', example: 'https://acme.example/' });

const brandingSchema = z
  .strictObject({
    name: z.string().max(200).nullable().meta({ description: 'Shown at the top of the pages, 1-100 characters' }),
    logoUrl: z.string().max(2048).nullable().meta({
      description: 'No longer taken (400 VALIDATION_FAILED): a logo hot-linked from elsewhere is fetched by every visitor; send `logo`',
      deprecated: true,
    }),
    logo: z
      .string()
      .max(48 * 1024)
      .nullable()
      .meta({
        description:
          'The logo beside the name: a PNG, JPEG, GIF or WebP image as a data: URI (data:image/png;base64,…), at most 32 KB. The pages carry it: a visitor’s browser fetches nothing from elsewhere',
      }),
    accentColor: z.string().max(16).nullable().meta({ description: 'The pages’ accent as #rrggbb', example: '#ff6600' }),
  })
  .partial()
  .meta({ id: 'Branding', description: 'How the visitor pages of the domain look; absent or null: the service’s' });

const robots = z.enum(['allow', 'disallow']).meta({ description: '`GET /robots.txt`: disallow (the default) lets crawlers fetch only links marked crawlable' });
const appleAppSiteAssociation = z
  .record(z.string(), z.unknown())
  .meta({ description: 'Served at /.well-known/apple-app-site-association: applinks (details with appIDs and paths or components), webcredentials, appclips' });
const androidAssetLinks = z
  .array(z.unknown())
  .max(100)
  .meta({ description: 'Served at /.well-known/assetlinks.json: Digital Asset Links statements (relation, target with package_name and fingerprints)' });

const hstsSchema = z
  .strictObject({
    maxAge: z.number().int().meta({ description: 'Seconds browsers keep to HTTPS, 0 to 63072000 (two years)', example: 31536000 }),
    includeSubDomains: z.boolean().optional().meta({ description: 'Also the names under the domain (default false)' }),
    preload: z.boolean().optional().meta({ description: 'Ask for the browsers’ preload lists: needs includeSubDomains and a year (default false)' }),
  })
  .meta({ id: 'Hsts', description: 'Strict-Transport-Security sent with every answer of the domain over HTTPS; null: none' });

export const domainSettingsSchema = z
  .object({
    domain: z.string(),
    shared: z.boolean().meta({ description: 'One of the service’s domains (operators only)' }),
    version: z.number().int().meta({ description: 'Also the ETag; 0 while nothing was ever set' }),
    updatedAt: z.string().meta({ format: 'date-time' }).nullable(),
    notFoundRedirect: z.string().nullable().meta({ description: 'Where a browser asking for an unknown or disabled code goes; null: the 404 page' }),
    pathNotFoundRedirect: z
      .string()
      .nullable()
      .meta({ description: 'Where a browser asking for any other path that is no short URL goes (Shlink’s regular 404); null: the 404 answer' }),
    rootRedirect: z.string().nullable().meta({ description: 'Where `/` goes; null: 404' }),
    expiredRedirect: z.string().nullable().meta({ description: 'Where a browser asking for an expired or exhausted link goes; null: the 410 page' }),
    branding: z.object({ name: z.string().nullable(), logo: z.string().nullable(), accentColor: z.string().nullable() }).nullable(),
    robots,
    appleAppSiteAssociation: z.record(z.string(), z.unknown()).nullable(),
    androidAssetLinks: z.array(z.unknown()).nullable(),
    hsts: z.object({ maxAge: z.number().int(), includeSubDomains: z.boolean(), preload: z.boolean() }).nullable(),
    trackConversions: z.boolean().meta({
      description:
        'Every click of every link of the domain gets a click id for conversions (docs/analytics.md, "Conversions"); a link with its own tracking keeps its parameter',
    }),
    conversionParam: z.string().meta({ description: 'The query parameter the click id goes to the target in (default sl_cid)' }),
    status: z.enum(['pending', 'verified', 'unverified']).meta({
      description:
        'Whether the domain serves: verified (the service’s always are); pending or unverified ones serve nothing (their ownership: GET /api/v1/domains/{domain}/ownership)',
    }),
  })
  .meta({ id: 'DomainSettings' });

/** Every field optional; null puts the default back. */
export const domainSettingsEditSchema = z
  .strictObject({
    notFoundRedirect: target.nullable(),
    pathNotFoundRedirect: target.nullable(),
    rootRedirect: target.nullable(),
    expiredRedirect: target.nullable(),
    branding: brandingSchema.nullable(),
    robots: robots.nullable(),
    appleAppSiteAssociation: appleAppSiteAssociation.nullable(),
    androidAssetLinks: androidAssetLinks.nullable(),
    hsts: hstsSchema.nullable(),
    trackConversions: z
      .boolean()
      .nullable()
      .meta({ description: 'Conversion tracking for every link of the domain (not on a shared domain: 400 VALIDATION_FAILED); null: off' }),
    conversionParam: z
      .string()
      .max(40)
      .nullable()
      .meta({ description: 'The click id’s query parameter: a letter, then up to 39 of A-Za-z0-9_.-; null: sl_cid', example: 'sl_cid' }),
  })
  .partial()
  .meta({ id: 'DomainSettingsEdit' });

export const domainSettingsListSchema = z.object({ domains: z.array(domainSettingsSchema) }).meta({ id: 'DomainSettingsList' });

export const settingsDomainParams = z.strictObject({ domain: z.string().max(253).meta({ example: 'links.example.com' }) });

export const settingsIfMatchHeader = z.object({
  'if-match': z.string().optional().meta({ description: 'The ETag you read; settings changed since answer 412' }),
});
