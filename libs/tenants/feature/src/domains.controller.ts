import { Body, Controller, Get, Headers, Inject, Param, Patch, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import {
  DEFAULT_DOMAIN_CONVERSION_PARAM,
  DOMAIN_SETTING_FIELDS,
  DomainSettingsEdit,
  DomainSettingsService,
  OwnedDomainSettings,
} from '@shortlink/tenants-domain';
import { ApiKeyGuard, auditContextOf, AuthenticatedRequest, Contract, versionOf } from '@shortlink/nest-platform';
import {
  domainSettingsEditSchema,
  domainSettingsListSchema,
  domainSettingsSchema,
  settingsDomainParams,
  settingsIfMatchHeader,
} from './domain-settings.schemas';

const TAGS = ['domains'];
const ETAG = { ETag: 'The settings’ version, for If-Match' };

/**
 * The settings of a tenant's own domains, and for operators (admin scope) of the service's
 * (docs/design.md, "Domain settings"): where browsers go instead of a page, the pages' branding,
 * robots.txt and the well-known files of app links. A change reaches every redirect instance within
 * the bound of link edits.
 */
@Controller('api/v1/domains')
@UseGuards(ApiKeyGuard)
export class DomainsController {
  constructor(@Inject(DomainSettingsService) private readonly settings: DomainSettingsService) {}

  @Get()
  @Contract({
    summary: 'Your domains with their settings (operators: the service’s too)',
    operationId: 'listDomains',
    tags: TAGS,
    scope: 'links:read',
    responses: { 200: { description: 'The domains', schema: domainSettingsListSchema } },
  })
  async list(@Req() req: AuthenticatedRequest) {
    return { domains: (await this.settings.list(req.principal!)).map(settingsView) };
  }

  @Get(':domain')
  @Contract({
    summary: 'A domain’s settings',
    operationId: 'getDomain',
    description: 'A domain you do not own is 404 `DOMAIN_NOT_FOUND`; one of the service’s needs the admin scope (403 `INSUFFICIENT_SCOPE`).',
    tags: TAGS,
    scope: 'links:read',
    params: settingsDomainParams,
    responses: { 200: { description: 'The settings (the defaults while none were set)', schema: domainSettingsSchema, headers: ETAG } },
    errors: [403, 404],
  })
  async get(@Req() req: AuthenticatedRequest, @Param('domain') domain: string, @Res({ passthrough: true }) reply: FastifyReply) {
    const settings = await this.settings.get(req.principal!, domain);
    reply.header('etag', `"${settings.version}"`);
    return settingsView(settings);
  }

  @Patch(':domain')
  @Contract({
    summary: 'Change a domain’s settings (null puts a default back)',
    operationId: 'updateDomain',
    description:
      'Every URL passes the URL policy; the well-known documents are checked for the shape Apple and Android read (400 `VALIDATION_FAILED` with the `field`). ' +
      'Every redirect instance serves the change within 100 ms of this answer.',
    tags: TAGS,
    scope: 'links:write',
    params: settingsDomainParams,
    headers: settingsIfMatchHeader,
    body: domainSettingsEditSchema,
    responses: { 200: { description: 'The settings after the change', schema: domainSettingsSchema, headers: ETAG } },
    errors: [403, 404, 412, 413, 415],
  })
  async update(
    @Req() req: AuthenticatedRequest,
    @Param('domain') domain: string,
    @Body() body: z.infer<typeof domainSettingsEditSchema>,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const edit: DomainSettingsEdit = Object.fromEntries(DOMAIN_SETTING_FIELDS.filter((f) => f in body).map((f) => [f, (body as Record<string, unknown>)[f]]));
    const settings = await this.settings.update(req.principal!, domain, edit, versionOf(ifMatch), auditContextOf(req));
    reply.header('etag', `"${settings.version}"`);
    return settingsView(settings);
  }
}

export function settingsView(s: OwnedDomainSettings): z.infer<typeof domainSettingsSchema> {
  return {
    domain: s.domain,
    shared: s.shared,
    version: s.version,
    updatedAt: s.updatedAt?.toISOString() ?? null,
    notFoundRedirect: s.notFoundRedirect,
    pathNotFoundRedirect: s.pathNotFoundRedirect,
    rootRedirect: s.rootRedirect,
    expiredRedirect: s.expiredRedirect,
    branding: s.branding,
    robots: s.robots,
    appleAppSiteAssociation: s.appleAppSiteAssociation as Record<string, unknown> | null,
    androidAssetLinks: s.androidAssetLinks as unknown[] | null,
    hsts: s.hsts,
    trackConversions: s.trackConversions,
    conversionParam: s.conversionParam ?? DEFAULT_DOMAIN_CONVERSION_PARAM,
    status: s.status,
  };
}
