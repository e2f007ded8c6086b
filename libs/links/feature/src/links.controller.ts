import { Body, Controller, Delete, Get, Headers, HttpCode, Inject, Param, Patch, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import QRCode from 'qrcode';
import { z } from 'zod';
import { qrUrlOf } from '@shortlink/clicks-domain';
import type { AuditContext } from '@shortlink/audit-domain';
import { EDITABLE_FIELDS, Link, LINK_COMMANDS, LinkCommands, LinkEdit, LinkService } from '@shortlink/links-domain';
import { ApiKeyGuard, auditContextOf, AuthenticatedRequest, Contract, versionOf } from '@shortlink/nest-platform';
import { LinkPresenter, LinkView } from './link-presenter';
import { codeParams, domainQuery, ifMatchHeader, linkCreationSchema, linkEditSchema, linkPageSchema, linkSchema, listQuery, qrQuery } from './link.schemas';

const TAGS = ['links'];
const ETAG = { ETag: 'The link’s version, for If-Match' };

/** The tenant link API (docs/design.md, "Link options"): every route scoped to the caller's tenant. */
const QR_IMAGE = z.string().meta({ format: 'binary' });

@Controller('api/v1/links')
@UseGuards(ApiKeyGuard)
export class LinksController {
  constructor(
    @Inject(LinkService) private readonly links: LinkService,
    @Inject(LinkPresenter) private readonly present: LinkPresenter,
    @Inject(LINK_COMMANDS) private readonly commands: LinkCommands<AuditContext>,
  ) {}

  @Post()
  @HttpCode(201)
  @Contract({
    summary: 'Create a short link',
    operationId: 'createLink',
    tags: TAGS,
    scope: 'links:write',
    body: linkCreationSchema,
    responses: {
      201: { description: 'Created', schema: linkSchema, headers: { ...ETAG, Location: 'Where the new link is read: /api/v1/links/{code}[?domain=…]' } },
    },
    errors: [409, 413, 415],
  })
  async create(
    @Req() req: AuthenticatedRequest,
    @Body() body: z.infer<typeof linkCreationSchema>,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<LinkView> {
    const link = await this.commands.create(auditContextOf(req), { ...body, tenantId: req.principal!.tenantId });
    reply.header('etag', etagOf(link)).header('location', `/api/v1/links/${encodeURIComponent(link.code)}${this.present.domainQuery(link)}`);
    return this.present.view(link);
  }

  @Get()
  @Contract({
    summary: 'List your links, newest first',
    operationId: 'listLinks',
    tags: TAGS,
    scope: 'links:read',
    query: listQuery,
    responses: { 200: { description: 'A page of links', schema: linkPageSchema } },
  })
  async list(@Req() req: AuthenticatedRequest, @Query() query: z.infer<typeof listQuery>) {
    const page = await this.links.list(req.principal!.tenantId, query);
    return { links: page.links.map((l) => this.present.view(l)), nextCursor: page.nextCursor };
  }

  @Get(':code')
  @Contract({
    summary: 'Read a link',
    operationId: 'getLink',
    tags: TAGS,
    scope: 'links:read',
    params: codeParams,
    query: domainQuery,
    responses: { 200: { description: 'The link', schema: linkSchema, headers: ETAG } },
    errors: [404],
  })
  async get(
    @Req() req: AuthenticatedRequest,
    @Param('code') code: string,
    @Query() query: z.infer<typeof domainQuery>,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<LinkView> {
    const link = await this.links.get(req.principal!.tenantId, this.present.id(code, query.domain));
    reply.header('etag', etagOf(link));
    return this.present.view(link);
  }

  @Patch(':code')
  @Contract({
    summary: 'Edit a link (null clears an option)',
    operationId: 'updateLink',
    tags: TAGS,
    scope: 'links:write',
    params: codeParams,
    query: domainQuery,
    headers: ifMatchHeader,
    body: linkEditSchema,
    responses: { 200: { description: 'The edited link', schema: linkSchema, headers: ETAG } },
    errors: [404, 412, 413, 415],
  })
  async update(
    @Req() req: AuthenticatedRequest,
    @Param('code') code: string,
    @Query() query: z.infer<typeof domainQuery>,
    @Body() body: z.infer<typeof linkEditSchema>,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<LinkView> {
    const edit: LinkEdit = Object.fromEntries(EDITABLE_FIELDS.filter((f) => f in body).map((f) => [f, (body as Record<string, unknown>)[f]]));
    const change = await this.commands.edit(auditContextOf(req), req.principal!.tenantId, this.present.id(code, query.domain), edit, versionOf(ifMatch));
    reply.header('etag', etagOf(change.after));
    return this.present.view(change.after);
  }

  @Delete(':code')
  @HttpCode(204)
  @Contract({
    summary: 'Delete a link (its code is not handed out again for 90 days)',
    operationId: 'deleteLink',
    tags: TAGS,
    scope: 'links:write',
    params: codeParams,
    query: domainQuery,
    headers: ifMatchHeader,
    responses: { 204: { description: 'Deleted' } },
    errors: [404, 412],
  })
  async remove(
    @Req() req: AuthenticatedRequest,
    @Param('code') code: string,
    @Query() query: z.infer<typeof domainQuery>,
    @Headers('if-match') ifMatch: string | undefined,
  ): Promise<void> {
    await this.commands.remove(auditContextOf(req), req.principal!.tenantId, this.present.id(code, query.domain), versionOf(ifMatch));
  }

  @Get(':code/qr')
  @Contract({
    summary: 'QR code of the short URL',
    operationId: 'getLinkQrCode',
    description:
      'Encodes the short URL followed by `/~` (e.g. `https://sho.rt/abc1234/~`): the redirect answers it exactly as the short URL and counts the click with source `qr` (the `sources` breakdown and the visits).',
    tags: TAGS,
    scope: 'links:read',
    params: codeParams,
    query: qrQuery,
    responses: {
      200: {
        description: 'The QR code: SVG by default, PNG with `format=png`',
        schema: QR_IMAGE,
        contentType: 'image/svg+xml',
        alternatives: { 'image/png': QR_IMAGE },
      },
    },
    errors: [404],
  })
  async qr(@Req() req: AuthenticatedRequest, @Param('code') code: string, @Query() query: z.infer<typeof qrQuery>, @Res() reply: FastifyReply): Promise<void> {
    const link = await this.links.get(req.principal!.tenantId, this.present.id(code, query.domain));
    const options = { width: query.size, margin: 2, errorCorrectionLevel: 'M' as const };
    // The marked URL tells a scan from a click (docs/design.md, "QR codes").
    const shortUrl = qrUrlOf(this.present.shortUrl(link));
    reply.header('cache-control', 'private, max-age=300');
    if (query.format === 'png') reply.type('image/png').send(await QRCode.toBuffer(shortUrl, options));
    else reply.type('image/svg+xml').send(await QRCode.toString(shortUrl, { ...options, type: 'svg' }));
  }
}

export const etagOf = (link: Link) => `"${link.version}"`;
