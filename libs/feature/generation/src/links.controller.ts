import { Body, Controller, Get, HttpCode, Inject, Param, Post, Req, UseGuards } from '@nestjs/common';
import { AppConfig } from '@shortlink/config';
import { DomainError, ErrorCode } from '@shortlink/core';
import { Link, LinkService } from '@shortlink/links-domain';
import { APP_CONFIG } from '@shortlink/nest-platform';
import { ApiKeyGuard, AuthenticatedRequest } from '@shortlink/nest-platform';

export interface LinkView {
  code: string;
  domain: string;
  shortUrl: string;
  url: string;
  createdAt: string;
  expiresAt: string | null;
  status: Link['status'];
  redirectType: Link['redirectType'];
}

@Controller('api/v1/links')
@UseGuards(ApiKeyGuard)
export class LinksController {
  constructor(
    @Inject(LinkService) private readonly links: LinkService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post()
  @HttpCode(201)
  async create(@Req() req: AuthenticatedRequest, @Body() body: unknown): Promise<LinkView> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new DomainError(ErrorCode.VALIDATION_FAILED, 'request body must be a JSON object like {"url": "https://..."}');
    }
    const { url, alias, redirectType, expiresAt } = body as Record<string, unknown>;
    return this.view(await this.links.create({ tenantId: req.principal!.tenantId, url, alias, redirectType, expiresAt }));
  }

  @Get(':code')
  async get(@Req() req: AuthenticatedRequest, @Param('code') code: string): Promise<LinkView> {
    return this.view(await this.links.get(req.principal!.tenantId, { domain: this.config.links.defaultDomain, code }));
  }

  private view(link: Link): LinkView {
    const base = link.domain === this.config.links.defaultDomain ? this.config.links.publicBaseUrl : `https://${link.domain}`;
    return {
      code: link.code,
      domain: link.domain,
      shortUrl: `${base}/${link.code}`,
      url: link.targetUrl,
      createdAt: link.createdAt.toISOString(),
      expiresAt: link.expiresAt?.toISOString() ?? null,
      status: link.status,
      redirectType: link.redirectType,
    };
  }
}
