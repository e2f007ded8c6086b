import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Req, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { ApiKey, ApiKeyService } from '@shortlink/tenants-domain';
import { ApiKeyGuard, auditContextOf, AuthenticatedRequest, Contract } from '@shortlink/nest-platform';
import { apiKeySchema, issuedKeySchema, keyCreationSchema, keyParams } from './tenant.schemas';

const TAGS = ['keys'];

/**
 * A tenant's API keys (docs/design.md, "Tenants, keys and plans"). Rotation: create the new key,
 * move the clients over, revoke the old one; a revoked key fails within a second everywhere.
 */
@Controller('api/v1/keys')
@UseGuards(ApiKeyGuard)
export class KeysController {
  constructor(@Inject(ApiKeyService) private readonly keys: ApiKeyService) {}

  @Get()
  @Contract({
    summary: 'List your keys (revoked ones too, with when)',
    operationId: 'listKeys',
    tags: TAGS,
    scope: 'links:read',
    responses: { 200: { description: 'The keys', schema: z.object({ keys: z.array(apiKeySchema) }) } },
  })
  async list(@Req() req: AuthenticatedRequest) {
    return { keys: (await this.keys.listKeys(req.principal!.tenantId)).map(keyView) };
  }

  @Post()
  @HttpCode(201)
  @Contract({
    summary: 'Create a key; the secret is in this answer only',
    operationId: 'createKey',
    description:
      'A key never gets a scope the calling key does not have. A tenant holds at most its plan’s number of active keys (403 `KEY_LIMIT_REACHED` beyond: revoke one first).',
    tags: TAGS,
    scope: 'links:write',
    body: keyCreationSchema,
    responses: { 201: { description: 'Created', schema: issuedKeySchema } },
    errors: [403],
  })
  async create(@Req() req: AuthenticatedRequest, @Body() body: z.infer<typeof keyCreationSchema>) {
    const issued = await this.keys.createKey(req.principal!, body, auditContextOf(req));
    return { key: keyView(issued.key), apiKey: issued.apiKey };
  }

  @Delete(':id')
  @HttpCode(204)
  @Contract({
    summary: 'Revoke a key (it fails within a second on every instance)',
    operationId: 'revokeKey',
    description: 'Only a key that holds every scope of the revoked key may revoke it (403 `INSUFFICIENT_SCOPE` otherwise).',
    tags: TAGS,
    scope: 'links:write',
    params: keyParams,
    responses: { 204: { description: 'Revoked' } },
    errors: [403, 404],
  })
  async revoke(@Req() req: AuthenticatedRequest, @Param('id') id: string): Promise<void> {
    await this.keys.revokeKey(req.principal!, id, auditContextOf(req));
  }
}

export function keyView(key: ApiKey): z.infer<typeof apiKeySchema> {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    scopes: [...key.scopes],
    createdAt: key.createdAt.toISOString(),
    expiresAt: key.expiresAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
  };
}
