import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Req, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { Delivery, Webhook, WebhookService } from '@shortlink/webhooks-domain';
import { ApiKeyGuard, auditContextOf, AuthenticatedRequest, Contract } from '@shortlink/nest-platform';
import {
  deliveryPageSchema,
  deliveryParams,
  deliveryQuery,
  deliverySchema,
  secretRotatedSchema,
  webhookCreatedSchema,
  webhookCreationSchema,
  webhookEditSchema,
  webhookListSchema,
  webhookParams,
  webhookSchema,
} from './webhook.schemas';

const TAGS = ['webhooks'];
const URL_RULES =
  'The URL is http(s), without credentials, and its host must resolve to public addresses only (checked again before every attempt; 400 `URL_NOT_ALLOWED` with `reason: private-address` otherwise, unless WEBHOOK_ALLOW_PRIVATE=true).';

/**
 * A tenant's webhook endpoints and their deliveries (docs/design.md, "Webhooks"). Managing them
 * takes `links:write` and reading them `links:read`: the events are those of the tenant's links,
 * so whoever may manage the links may subscribe to them (no scope of its own).
 */
@Controller('api/v1/webhooks')
@UseGuards(ApiKeyGuard)
export class WebhooksController {
  constructor(@Inject(WebhookService) private readonly webhooks: WebhookService) {}

  @Post()
  @HttpCode(201)
  @Contract({
    summary: 'Create a webhook; its signing secret is in this answer only',
    operationId: 'createWebhook',
    description: `Deliveries are signed as Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature v1 HMAC-SHA256). ${URL_RULES}`,
    tags: TAGS,
    scope: 'links:write',
    body: webhookCreationSchema,
    responses: { 201: { description: 'Created', schema: webhookCreatedSchema } },
    errors: [403],
  })
  async create(@Req() req: AuthenticatedRequest, @Body() body: z.infer<typeof webhookCreationSchema>) {
    const { webhook, secret } = await this.webhooks.create(req.principal!.tenantId, body, auditContextOf(req));
    return { id: webhook.id, secret, webhook: webhookView(webhook) };
  }

  @Get()
  @Contract({
    summary: 'List your webhooks',
    operationId: 'listWebhooks',
    tags: TAGS,
    scope: 'links:read',
    responses: { 200: { description: 'The webhooks, oldest first', schema: webhookListSchema } },
  })
  async list(@Req() req: AuthenticatedRequest) {
    return { webhooks: (await this.webhooks.list(req.principal!.tenantId)).map(webhookView) };
  }

  @Get(':id')
  @Contract({
    summary: 'Get a webhook',
    operationId: 'getWebhook',
    tags: TAGS,
    scope: 'links:read',
    params: webhookParams,
    responses: { 200: { description: 'The webhook', schema: webhookSchema } },
    errors: [404],
  })
  async get(@Req() req: AuthenticatedRequest, @Param('id') id: string) {
    return webhookView(await this.webhooks.get(req.principal!.tenantId, id));
  }

  @Patch(':id')
  @Contract({
    summary: 'Change a webhook’s URL, events or description, or enable it again',
    operationId: 'updateWebhook',
    description: URL_RULES,
    tags: TAGS,
    scope: 'links:write',
    params: webhookParams,
    body: webhookEditSchema,
    responses: { 200: { description: 'The webhook', schema: webhookSchema } },
    errors: [404],
  })
  async update(@Req() req: AuthenticatedRequest, @Param('id') id: string, @Body() body: z.infer<typeof webhookEditSchema>) {
    return webhookView(await this.webhooks.update(req.principal!.tenantId, id, body, auditContextOf(req)));
  }

  @Delete(':id')
  @HttpCode(204)
  @Contract({
    summary: 'Delete a webhook and its deliveries',
    operationId: 'deleteWebhook',
    tags: TAGS,
    scope: 'links:write',
    params: webhookParams,
    responses: { 204: { description: 'Deleted' } },
    errors: [404],
  })
  async remove(@Req() req: AuthenticatedRequest, @Param('id') id: string): Promise<void> {
    await this.webhooks.remove(req.principal!.tenantId, id, auditContextOf(req));
  }

  @Post(':id/rotate-secret')
  @Contract({
    summary: 'Rotate a webhook’s signing secret; the old one keeps signing beside the new one for 24 h',
    operationId: 'rotateWebhookSecret',
    description: 'During the overlap every delivery carries two signatures in webhook-signature, space-separated: a receiver with either secret verifies it.',
    tags: TAGS,
    scope: 'links:write',
    params: webhookParams,
    responses: { 200: { description: 'The new secret, shown this once', schema: secretRotatedSchema } },
    errors: [404],
  })
  @HttpCode(200)
  async rotate(@Req() req: AuthenticatedRequest, @Param('id') id: string) {
    const rotated = await this.webhooks.rotateSecret(req.principal!.tenantId, id, auditContextOf(req));
    return { secret: rotated.secret, previousSecretValidUntil: rotated.previousSecretValidUntil.toISOString() };
  }

  @Get(':id/deliveries')
  @Contract({
    summary: 'A webhook’s deliveries, newest first, with their attempts',
    operationId: 'listWebhookDeliveries',
    tags: TAGS,
    scope: 'links:read',
    params: webhookParams,
    query: deliveryQuery,
    responses: { 200: { description: 'A page of deliveries', schema: deliveryPageSchema } },
    errors: [404],
  })
  async deliveries(@Req() req: AuthenticatedRequest, @Param('id') id: string, @Query() query: z.infer<typeof deliveryQuery>) {
    const page = await this.webhooks.deliveries(req.principal!.tenantId, id, query.limit, query.cursor ?? null);
    return { deliveries: page.deliveries.map(deliveryView), nextCursor: page.nextCursor };
  }

  @Post(':id/deliveries/:deliveryId/redeliver')
  @HttpCode(202)
  @Contract({
    summary: 'Send a delivery again, now, under its own webhook-id',
    operationId: 'redeliverWebhookDelivery',
    tags: TAGS,
    scope: 'links:write',
    params: deliveryParams,
    responses: { 202: { description: 'Queued', schema: deliverySchema } },
    errors: [404],
  })
  async redeliver(@Req() req: AuthenticatedRequest, @Param('id') id: string, @Param('deliveryId') deliveryId: string) {
    return deliveryView(await this.webhooks.redeliver(req.principal!.tenantId, id, deliveryId));
  }
}

function webhookView(w: Webhook): z.infer<typeof webhookSchema> {
  return {
    id: w.id,
    url: w.url,
    events: [...w.events],
    description: w.description,
    enabled: w.enabled,
    disabledReason: w.disabledReason,
    failingSince: w.failingSince?.toISOString() ?? null,
    previousSecretValidUntil: w.previousSecretUntil && w.previousSecretUntil.getTime() > Date.now() ? w.previousSecretUntil.toISOString() : null,
    createdAt: w.createdAt.toISOString(),
    updatedAt: w.updatedAt.toISOString(),
  };
}

function deliveryView(d: Delivery): z.infer<typeof deliverySchema> {
  return {
    id: d.id,
    eventType: d.eventType,
    status: d.status,
    attempts: d.attempts,
    lastStatusCode: d.lastStatusCode,
    lastError: d.lastError,
    nextAttemptAt: d.nextAttemptAt?.toISOString() ?? null,
    createdAt: d.createdAt.toISOString(),
    updatedAt: d.updatedAt.toISOString(),
    payload: JSON.parse(d.payload) as unknown,
  };
}
