import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppConfig } from '@shortlink/config';
import { DomainError, ErrorCode } from '@shortlink/core';
import { SessionClients, SsoService, SsoView } from '@shortlink/people-domain';
import { managerOf } from '@shortlink/tenants-domain';
import {
  ApiKeyGuard,
  APP_CONFIG,
  auditContextOf,
  AuthenticatedRequest,
  ClientAddressResolver,
  Contract,
  cookieOf,
  prefersHtml,
  sessionCookie,
} from '@shortlink/nest-platform';
import { secureCookie } from './session.controller';
import { ssoBody, ssoCallbackQuery, ssoSchema, ssoStartParams } from './sso.schemas';

/** The cookie of a started sign-in: its state, nonce and PKCE verifier, sealed; only the SSO routes see it. */
const PENDING_COOKIE = 'sl_sso';
const PENDING_PATH = '/api/v1/auth/sso';

/**
 * Single sign-on with the tenant's OpenID Connect provider (docs/design.md, "Single sign-on"): its
 * owner configures it; people sign in through `start` and come back to `callback`, which opens the
 * same session cookie as a password sign-in.
 */
@Controller('api/v1')
export class SsoController {
  constructor(
    @Inject(SsoService) private readonly sso: SsoService,
    @Inject(ClientAddressResolver) private readonly addresses: ClientAddressResolver,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SessionClients) private readonly clients: SessionClients,
  ) {}

  @Put('sso')
  @UseGuards(ApiKeyGuard)
  @Contract({
    summary: 'Configure the tenant’s OpenID Connect provider for single sign-on',
    operationId: 'configureSso',
    description:
      'Owners only (and an owner’s keys with members:write, or the first key of a tenant without an owner); an admin, or an admin’s key, gets 403 `INSUFFICIENT_SCOPE`. The client secret is sealed at rest and never answered; left out on a change, the stored one stays. 400 `VALIDATION_FAILED` for an issuer that is not https, no allowed domain, or `owner` as defaultRole; 400 `URL_NOT_ALLOWED` (with `reason`) for an issuer the URL policy refuses (an IP address, a local or internal name) or whose host resolves to nothing or to any non-public address (loopback, private, link-local, …, in any IPv4-in-IPv6 spelling).',
    tags: ['sso'],
    scope: 'members:write',
    body: ssoBody,
    responses: { 200: { description: 'The provider, as configured (no secret)', schema: ssoSchema } },
    errors: [400],
  })
  async configure(@Req() req: AuthenticatedRequest, @Body() body: z.infer<typeof ssoBody>) {
    const tenantId = ownerOf(req);
    return this.view(tenantId, await this.sso.configure(tenantId, body, auditContextOf(req)));
  }

  @Get('sso')
  @UseGuards(ApiKeyGuard)
  @Contract({
    summary: 'Read the tenant’s single sign-on provider (never its secret)',
    operationId: 'getSso',
    description: '404 `SSO_NOT_CONFIGURED` when there is none.',
    tags: ['sso'],
    scope: 'members:write',
    responses: { 200: { description: 'The provider', schema: ssoSchema } },
    errors: [404],
  })
  async read(@Req() req: AuthenticatedRequest) {
    const tenantId = req.principal!.tenantId;
    return this.view(tenantId, await this.sso.get(tenantId));
  }

  @Delete('sso')
  @HttpCode(204)
  @UseGuards(ApiKeyGuard)
  @Contract({
    summary: 'Turn single sign-on off (people it created keep their membership; they sign in again once it is back)',
    operationId: 'deleteSso',
    description:
      'Owners only (and an owner’s keys with members:write, or the first key of a tenant without an owner). 404 `SSO_NOT_CONFIGURED` when there is none.',
    tags: ['sso'],
    scope: 'members:write',
    responses: { 204: { description: 'Removed' } },
    errors: [404],
  })
  async remove(@Req() req: AuthenticatedRequest): Promise<void> {
    await this.sso.remove(ownerOf(req), auditContextOf(req));
  }

  @Get('auth/sso/:tenant/start')
  @Contract({
    summary: 'Begin signing in with the tenant’s provider: a redirect to it (authorization code with PKCE, state and nonce)',
    operationId: 'startSso',
    description:
      'Answers 302 to the provider and a short-lived, sealed `sl_sso` cookie holding the state, nonce and PKCE verifier (nothing stored server-side). 404 `SSO_NOT_CONFIGURED`; 429 `RATE_LIMITED` past SSO_STARTS_PER_MINUTE_PER_TENANT or _PER_ADDRESS; 503 `SSO_PROVIDER_UNAVAILABLE` when the provider cannot be reached (an address single sign-on may not reach, a port closed or silent, no discovery document): always the same answer, given SSO_TIMEOUT_SECONDS after the call began.',
    tags: ['auth'],
    secured: false,
    params: ssoStartParams,
    responses: {
      302: {
        description: 'To the provider’s sign-in',
        headers: {
          Location: 'The provider’s authorization URL',
          'Set-Cookie': 'sl_sso=…; Path=/api/v1/auth/sso; Max-Age=600; HttpOnly; SameSite=Lax[; Secure]',
        },
      },
    },
    errors: [403, 404, 429, 503],
  })
  async start(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('tenant') tenant: string): Promise<void> {
    const started = await this.sso.start(tenant, this.addresses.of(req.raw));
    reply
      .header('set-cookie', this.pendingCookie(started.pending, started.maxAgeSeconds, req))
      .header('cache-control', 'no-store')
      .redirect(started.url, 302);
  }

  @Get('auth/sso/callback')
  @Contract({
    summary: 'Where the provider sends people back: checks the state, exchanges the code, opens a session',
    operationId: 'finishSso',
    description:
      'On success 302 to the console (SHORTLINK_CONSOLE_URL) with the session cookie `sl_session`, as a password sign-in gives it; a person of an allowed domain who is not a member yet is created with the configured role. A browser (Accept preferring text/html) that fails is sent back to the console instead, with `?sso_error=<code>`, which its sign-in shows; other clients get problem+json: 400 `SSO_STATE_MISMATCH` (a state that is not this browser’s, or a sign-in started more than ten minutes ago), 401 `SSO_CODE_REJECTED` (a wrong, used or expired code, or the provider refused), 403 `SSO_EMAIL_DOMAIN_REFUSED`, 503 `SSO_PROVIDER_UNAVAILABLE`.',
    tags: ['auth'],
    secured: false,
    query: ssoCallbackQuery,
    responses: {
      302: {
        description: 'Signed in: to the console; or, for a browser, not signed in: to the console with `?sso_error=<code>`',
        headers: { Location: 'The console', 'Set-Cookie': 'sl_session=…; Path=/api; Max-Age=…; HttpOnly; SameSite=Lax[; Secure]' },
      },
    },
    errors: [400, 401, 403, 404, 503],
  })
  async callback(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const url = new URL(req.url, this.config.people.sso.callbackUrl);
    let signed: Awaited<ReturnType<SsoService['finish']>>;
    try {
      const address = this.addresses.of(req.raw);
      signed = await this.sso.finish(url, cookieOf(req, PENDING_COOKIE), address, this.clients.describe(req.headers['user-agent'], address));
    } catch (error) {
      // A browser sent back by the provider is shown the console's sign-in with what went wrong,
      // not a page of JSON; API clients keep problem+json (docs/design.md, "Single sign-on").
      if (!(error instanceof DomainError) || !prefersHtml(req.headers.accept)) throw error;
      const back = new URL(this.config.people.sso.successUrl);
      back.searchParams.set('sso_error', error.code);
      reply
        .header('set-cookie', this.pendingCookie('', 0, req))
        .header('cache-control', 'no-store')
        .redirect(back.toString(), 302);
      return;
    }
    const secure = secureCookie(this.config, this.addresses, req);
    reply
      .header('set-cookie', [sessionCookie(signed.token, this.config.people.session.absoluteMs / 1000, secure), this.pendingCookie('', 0, req)])
      .header('cache-control', 'no-store')
      .redirect(this.config.people.sso.successUrl, 302);
  }

  private pendingCookie(value: string, maxAgeSeconds: number, req: FastifyRequest): string {
    return [
      `${PENDING_COOKIE}=${value}`,
      `Path=${PENDING_PATH}`,
      `Max-Age=${maxAgeSeconds}`,
      'HttpOnly',
      'SameSite=Lax',
      ...(secureCookie(this.config, this.addresses, req) ? ['Secure'] : []),
    ].join('; ');
  }

  private view(tenantId: string, v: SsoView) {
    const callbackUrl = this.config.people.sso.callbackUrl;
    return {
      issuer: v.issuer,
      clientId: v.clientId,
      clientSecretSet: v.clientSecretSet,
      allowedDomains: [...v.allowedDomains],
      defaultRole: v.defaultRole as 'admin' | 'editor' | 'viewer',
      callbackUrl,
      startUrl: new URL(`/api/v1/auth/sso/${encodeURIComponent(tenantId)}/start`, callbackUrl).toString(),
      createdAt: v.createdAt.toISOString(),
      updatedAt: v.updatedAt.toISOString(),
    };
  }
}

/**
 * SSO is the owner's to change (docs/design.md, "Security model"): a person must be an owner, and
 * so must the person a key acts for; a key of no person holds members:write (the guard checked it)
 * only while its tenant has no owner.
 */
function ownerOf(req: AuthenticatedRequest): string {
  const principal = req.principal!;
  const manager = managerOf(principal);
  if (manager.kind === 'person' && manager.role !== 'owner')
    throw new DomainError(ErrorCode.INSUFFICIENT_SCOPE, 'only an owner configures single sign-on', { role: manager.role });
  return principal.tenantId;
}
