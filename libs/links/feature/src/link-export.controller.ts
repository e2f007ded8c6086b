import { Controller, Get, Inject, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { DomainError, ErrorCode } from '@shortlink/core';
import { LinkService } from '@shortlink/links-domain';
import { ApiKeyGuard, AuthenticatedRequest, Contract } from '@shortlink/nest-platform';
import { LinkPresenter } from './link-presenter';
import { linkExportPageSchema, listQuery } from './link.schemas';

/**
 * The export of a tenant's links (docs/design.md, "Import and export"): the list's pages and
 * cursor, each link with every field and its password as the argon2id hash, so that an import
 * elsewhere (`passwordHash`) protects it as before. Kept apart from the list and read routes,
 * which show only `passwordProtected`: a hash is asked for, never handed out by the way. It needs
 * `links:write` (whoever may set a link's password) besides `links:read`.
 */
@Controller('api/v1/export')
@UseGuards(ApiKeyGuard)
export class LinkExportController {
  constructor(
    @Inject(LinkService) private readonly links: LinkService,
    @Inject(LinkPresenter) private readonly present: LinkPresenter,
  ) {}

  @Get('links')
  @Contract({
    summary: 'Export your links with their password hashes, newest first',
    operationId: 'exportLinks',
    description:
      'The same pages, filters and cursor as GET /api/v1/links; each link also carries `passwordHash` (the argon2id hash, or null), which POST /api/v1/links and the batch take back as `passwordHash`. Needs the scopes links:read and links:write. Answers `Cache-Control: no-store`.',
    tags: ['links'],
    scope: 'links:write',
    query: listQuery,
    responses: { 200: { description: 'A page of links', schema: linkExportPageSchema } },
  })
  async export(@Req() req: AuthenticatedRequest, @Query() query: z.infer<typeof listQuery>, @Res({ passthrough: true }) reply: FastifyReply) {
    const principal = req.principal!;
    if (!principal.scopes.includes('links:read'))
      throw new DomainError(ErrorCode.INSUFFICIENT_SCOPE, 'this key lacks the links:read scope', { scope: 'links:read' });
    const page = await this.links.list(principal.tenantId, query);
    reply.header('cache-control', 'no-store');
    return { links: page.links.map((l) => ({ ...this.present.view(l), passwordHash: l.passwordHash })), nextCursor: page.nextCursor };
  }
}
