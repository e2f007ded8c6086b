import { Controller, Get, Inject, Req, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { LinkService, MAX_TAGS_LISTED } from '@shortlink/links-domain';
import { ApiKeyGuard, AuthenticatedRequest, Contract } from '@shortlink/nest-platform';

const tagListSchema = z.object({ tags: z.array(z.string()).meta({ description: `Each once, in order; at most ${MAX_TAGS_LISTED}` }) }).meta({ id: 'LinkTags' });

/** The tags a tenant's links carry (docs/design.md, "Link options"): what a tag picker offers; the links listing filters by any of them. */
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
}
