import { Body, Controller, Get, Inject, Param, Patch, Req, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { LinkService, MAX_TAGS_LISTED } from '@shortlink/links-domain';
import { ApiKeyGuard, AuthenticatedRequest, Contract } from '@shortlink/nest-platform';

const tagListSchema = z.object({ tags: z.array(z.string()).meta({ description: `Each once, in order; at most ${MAX_TAGS_LISTED}` }) }).meta({ id: 'LinkTags' });

const tagParams = z.object({ tag: z.string().min(1).max(200).meta({ description: 'The tag, URL-encoded, as links carry it' }) });

const tagSettingsSchema = z
  .object({
    tag: z.string(),
    trackConversions: z.boolean().meta({ description: 'Every link carrying the tag gives each click a click id (docs/analytics.md, "Conversions")' }),
    conversionParam: z.string().meta({ description: 'The query parameter of the click id (default `sl_cid`)' }),
  })
  .meta({ id: 'TagSettings' });

const tagSettingsEditSchema = z
  .strictObject({
    trackConversions: z.boolean(),
    conversionParam: z.string().nullable().optional().meta({ description: 'A letter, then up to 39 letters, digits or `_ . -`; null or absent: `sl_cid`' }),
  })
  .meta({ id: 'TagSettingsEdit' });

const tagSettingsChangeSchema = tagSettingsSchema
  .extend({ linksUpdated: z.number().int().meta({ description: 'Links carrying the tag whose tracking this switched (each as an edit)' }) })
  .meta({ id: 'TagSettingsChange' });

/**
 * The tags a tenant's links carry (docs/design.md, "Link options"): what a tag picker offers; the
 * links listing filters by any of them. A tag's settings: conversion tracking for every link
 * carrying it (docs/design.md, "Conversions").
 */
@Controller('api/v1/tags')
@UseGuards(ApiKeyGuard)
export class TagsController {
  constructor(@Inject(LinkService) private readonly links: LinkService) {}

  @Get()
  @Contract({
    summary: 'The tags of your links',
    operationId: 'listLinkTags',
    description: 'Read over every shard from the tags index; a tag is gone once no link of yours carries it.',
    tags: ['links'],
    scope: 'links:read',
    responses: { 200: { description: 'The tags', schema: tagListSchema } },
  })
  async list(@Req() req: AuthenticatedRequest) {
    return { tags: await this.links.tags(req.principal!.tenantId) };
  }

  @Get(':tag')
  @Contract({
    summary: 'A tag’s settings',
    operationId: 'getTagSettings',
    description: 'Conversion tracking of the links carrying the tag (off unless switched on, whether or not a link carries the tag).',
    tags: ['links'],
    scope: 'links:read',
    params: tagParams,
    responses: { 200: { description: 'The settings', schema: tagSettingsSchema } },
  })
  settings(@Req() req: AuthenticatedRequest, @Param('tag') tag: string) {
    return this.links.tagSettings(req.principal!.tenantId, tag);
  }

  @Patch(':tag')
  @Contract({
    summary: 'Switch conversion tracking for every link carrying a tag',
    operationId: 'updateTagSettings',
    description:
      '`trackConversions: true` gives each click of every link carrying the tag (now or later) a click id in `conversionParam`; false stops it, ' +
      'and a link that loses the tag loses it. A link’s own `trackConversions` keeps its own parameter. The links are rewritten as edits ' +
      'before the answer: every redirect instance serves them within the edit bound. Sending the same setting again resolves every link of the tag again.',
    tags: ['links'],
    scope: 'links:write',
    params: tagParams,
    body: tagSettingsEditSchema,
    responses: { 200: { description: 'The settings after the change', schema: tagSettingsChangeSchema } },
    errors: [415],
  })
  update(@Req() req: AuthenticatedRequest, @Param('tag') tag: string, @Body() body: z.infer<typeof tagSettingsEditSchema>) {
    return this.links.setTagTracking(req.principal!.tenantId, tag, body);
  }
}
