import { Body, Controller, Inject, Param, Put, Query, Req, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import type { AuditContext } from '@shortlink/audit-domain';
import { DomainError, ErrorCode } from '@shortlink/core';
import { LINK_COMMANDS, LinkCommands } from '@shortlink/links-domain';
import { ApiKeyGuard, auditContextOf, AuthenticatedRequest, Contract } from '@shortlink/nest-platform';
import { LinkPresenter } from './link-presenter';
import { codeParams, domainQuery, linkSchema, moderationBody } from './link.schemas';

/**
 * The operators' moderation of any tenant's link (docs/design.md, "Security model"): the `admin`
 * scope, recorded in the operator log.
 */
@Controller('api/v1/admin')
@UseGuards(ApiKeyGuard)
export class LinkModerationController {
  constructor(
    @Inject(LINK_COMMANDS) private readonly commands: LinkCommands<AuditContext>,
    @Inject(LinkPresenter) private readonly present: LinkPresenter,
  ) {}

  @Put('links/:code/moderation')
  @Contract({
    summary: 'Flag, ban or clear any tenant’s link',
    operationId: 'moderateLink',
    tags: ['admin'],
    scope: 'admin',
    params: codeParams,
    query: domainQuery,
    body: moderationBody,
    responses: { 200: { description: 'The link', schema: linkSchema } },
    errors: [404],
  })
  async moderate(
    @Req() req: AuthenticatedRequest,
    @Param('code') code: string,
    @Query() query: z.infer<typeof domainQuery>,
    @Body() body: z.infer<typeof moderationBody>,
  ) {
    const reason = body.reason?.trim() || null;
    if (body.moderation !== 'clear' && reason === null)
      throw new DomainError(ErrorCode.VALIDATION_FAILED, 'reason is required to flag or ban a link (visitors see it)', { field: 'reason' });
    const change = await this.commands.moderate(auditContextOf(req), this.present.id(code, query.domain), body.moderation, reason);
    return this.present.view(change.after);
  }
}
