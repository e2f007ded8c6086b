import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Req, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { ApiKey, ApiKeyService, KeyStanding } from '@shortlink/tenants-domain';
import { ApiKeyGuard, auditContextOf, AuthenticatedRequest, Contract } from '@shortlink/nest-platform';
import { apiKeySchema, issuedKeySchema, keyCreationSchema, keyParams, keyTransferSchema } from './tenant.schemas';

const TAGS = ['keys'];

/**
 * A tenant's API keys (docs/design.md, "Security model" and "Tenants, keys and plans"): managed
 * with `keys:write`; a key acts for the person who made it and never does more than that person's
 * role. Rotation: create the new key, move the clients over, revoke the old one; a revoked key
 * fails within a second everywhere.
 */
@Controller('api/v1/keys')
@UseGuards(ApiKeyGuard)
export class KeysController {
  constructor(@Inject(ApiKeyService) private readonly keys: ApiKeyService) {}

  @Get()
  @Contract({
    summary: 'List your tenant’s keys (revoked ones too, with when), each with the person it acts for and what it may do now',
    operationId: 'listKeys',
    tags: TAGS,
    scope: 'keys:write',
    responses: { 200: { description: 'The keys', schema: z.object({ keys: z.array(apiKeySchema) }) } },
  })
  async list(@Req() req: AuthenticatedRequest) {
    return { keys: (await this.keys.listKeys(req.principal!.tenantId)).map(({ key, standing }) => keyView(key, standing)) };
  }

  @Post()
  @HttpCode(201)
  @Contract({
    summary: 'Create a key acting for you; the secret is in this answer only',
    operationId: 'createKey',
    description:
      'The key acts for the person signed in (or the person the calling key acts for; none for a key of no person) and never gets a scope the caller does not have, nor one above that person’s role: a key of an admin, editor or viewer never holds `members:write`, which only an owner signed in gives (403 `INSUFFICIENT_SCOPE`). A tenant holds at most its plan’s number of active keys (403 `KEY_LIMIT_REACHED` beyond: revoke one first).',
    tags: TAGS,
    scope: 'keys:write',
    body: keyCreationSchema,
    responses: { 201: { description: 'Created', schema: issuedKeySchema } },
    errors: [403],
  })
  async create(@Req() req: AuthenticatedRequest, @Body() body: z.infer<typeof keyCreationSchema>) {
    const issued = await this.keys.createKey(req.principal!, body, auditContextOf(req));
    return { key: keyView(issued.key, issued.standing), apiKey: issued.apiKey };
  }

  @Delete(':id')
  @HttpCode(204)
  @Contract({
    summary: 'Revoke a key (it fails within a second on every instance)',
    operationId: 'revokeKey',
    description:
      'Your own keys; an owner any key; an admin the keys of members it manages (not an owner’s, not a key of no person) and suspended ones; editors only their own. The caller must also hold every scope of the revoked key. 403 `INSUFFICIENT_SCOPE` otherwise.',
    tags: TAGS,
    scope: 'keys:write',
    params: keyParams,
    responses: { 204: { description: 'Revoked' } },
    errors: [403, 404],
  })
  async revoke(@Req() req: AuthenticatedRequest, @Param('id') id: string): Promise<void> {
    await this.keys.revokeKey(req.principal!, id, auditContextOf(req));
  }

  @Post(':id/transfer')
  @HttpCode(200)
  @Contract({
    summary: 'Hand a key over to another active member: it acts for them from now on (owners only)',
    operationId: 'transferKey',
    description:
      'Keeps a removed person’s suspended keys working, or adopts a key of no person. The key keeps its scopes; what it may use follows the new person’s role. Recorded as `key.transferred`. 403 `INSUFFICIENT_SCOPE` for anyone but an owner (or a key of no person while the tenant has no owner), 404 `KEY_NOT_FOUND`, 404 `MEMBER_NOT_FOUND` for a member who is not active in the tenant.',
    tags: TAGS,
    scope: 'keys:write',
    params: keyParams,
    body: keyTransferSchema,
    responses: { 200: { description: 'The key, acting for the member', schema: apiKeySchema } },
    errors: [403, 404],
  })
  async transfer(@Req() req: AuthenticatedRequest, @Param('id') id: string, @Body() body: z.infer<typeof keyTransferSchema>) {
    const { key, standing } = await this.keys.transferKey(req.principal!, id, body.memberId, auditContextOf(req));
    return keyView(key, standing);
  }
}

export function keyView(key: ApiKey, standing: KeyStanding, now = Date.now()): z.infer<typeof apiKeySchema> {
  const status = key.revokedAt ? 'revoked' : key.expiresAt && key.expiresAt.getTime() <= now ? 'expired' : standing.suspended ? 'suspended' : 'active';
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    scopes: [...key.scopes],
    activeScopes: status === 'active' && !standing.suspended ? [...standing.scopes] : [],
    actsFor: key.memberId === null ? null : { id: key.memberId, email: key.person?.email ?? null, role: key.person?.role ?? null },
    status,
    createdAt: key.createdAt.toISOString(),
    expiresAt: key.expiresAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
  };
}
