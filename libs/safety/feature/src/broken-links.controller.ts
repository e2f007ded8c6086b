import { Body, Controller, Get, Headers, Inject, Put, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { BrokenLinkSettings, BrokenLinkSettingsService } from '@shortlink/safety-domain';
import { LinkChangeFeed, LINK_CHANGE_FEED, tenantsChange } from '@shortlink/links-domain';
import { ApiKeyGuard, AuthenticatedRequest, Contract, versionOf } from '@shortlink/nest-platform';
import { brokenLinkSettingsBody, brokenLinkSettingsSchema, settingsIfMatchHeader } from './safety.schemas';

const TAGS = ['links'];
const ETAG = { ETag: 'The settings’ version, for If-Match' };

/**
 * A tenant's choice for visitors of links the dead-link checks found broken (docs/design.md, "Trust
 * and safety"): the target all the same, a page, or a URL of its own (the URL policy of links).
 */
@Controller('api/v1/settings/broken-links')
@UseGuards(ApiKeyGuard)
export class BrokenLinksController {
  constructor(
    @Inject(BrokenLinkSettingsService) private readonly settings: BrokenLinkSettingsService,
    @Inject(LINK_CHANGE_FEED) private readonly feed: LinkChangeFeed,
  ) {}

  @Get()
  @Contract({
    summary: 'Where visitors of your broken links go',
    operationId: 'getBrokenLinkSettings',
    tags: TAGS,
    scope: 'links:read',
    responses: { 200: { description: 'The settings (the default, the target, while none were set)', schema: brokenLinkSettingsSchema, headers: ETAG } },
  })
  async get(@Req() req: AuthenticatedRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const settings = await this.settings.get(req.principal!.tenantId);
    reply.header('etag', `"${settings.version}"`);
    return view(settings);
  }

  @Put()
  @Contract({
    summary: 'Choose where visitors of your broken links go',
    operationId: 'setBrokenLinkSettings',
    description: '`url` passes the URL policy of link targets. Every redirect instance serves the change within 100 ms of this answer.',
    tags: TAGS,
    scope: 'links:write',
    headers: settingsIfMatchHeader,
    body: brokenLinkSettingsBody,
    responses: { 200: { description: 'The settings after the change', schema: brokenLinkSettingsSchema, headers: ETAG } },
    errors: [412, 415],
  })
  async put(
    @Req() req: AuthenticatedRequest,
    @Body() body: z.infer<typeof brokenLinkSettingsBody>,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const settings = await this.settings.update(req.principal!.tenantId, body, versionOf(ifMatch));
    // Every redirect reads the tenants' settings again now (best effort: each reads them every REDIRECT_TENANT_REFRESH_MS anyway).
    await this.feed.publish(tenantsChange(Date.now())).catch(() => undefined);
    reply.header('etag', `"${settings.version}"`);
    return view(settings);
  }
}

const view = (s: BrokenLinkSettings): z.infer<typeof brokenLinkSettingsSchema> => ({
  mode: s.mode,
  url: s.url,
  version: s.version,
  updatedAt: s.updatedAt?.toISOString() ?? null,
});
