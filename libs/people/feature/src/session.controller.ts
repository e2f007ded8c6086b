import { Body, Controller, Get, HttpCode, Inject, Post, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppConfig } from '@shortlink/config';
import { SessionClients, SessionService } from '@shortlink/people-domain';
import { TenantService } from '@shortlink/tenants-domain';
import {
  APP_CONFIG,
  ApiKeyGuard,
  AuthenticatedRequest,
  BrowserOrigins,
  ClientAddressResolver,
  Contract,
  loginBody,
  meSchema,
  meView,
  sessionCookie,
  signedInSchema,
} from '@shortlink/nest-platform';

const TAGS = ['auth'];

/**
 * Signing in and out, and who is calling (docs/design.md, "People and sessions"): the same routes on
 * every app that accepts people's sessions (generation and analytics), so an analyst signs in to the
 * dashboard with an email. The session is a cookie (HttpOnly, SameSite=Lax, Secure over https) for
 * /api; writes made with it carry the CSRF token these routes answer.
 */
@Controller('api/v1')
export class SessionController {
  constructor(
    @Inject(SessionService) private readonly sessions: SessionService,
    @Inject(TenantService) private readonly tenants: TenantService,
    @Inject(ClientAddressResolver) private readonly addresses: ClientAddressResolver,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(BrowserOrigins) private readonly origins: BrowserOrigins,
    @Inject(SessionClients) private readonly clients: SessionClients,
  ) {}

  @Post('auth/login')
  @HttpCode(200)
  @Contract({
    summary: 'Sign in with email and password: answers a session cookie and its CSRF token',
    operationId: 'signIn',
    description:
      'A member with a second factor sends `code` (or `recoveryCode`) too: without it 401 `SECOND_FACTOR_REQUIRED`, a wrong or replayed one 401 `UNAUTHENTICATED` (counted as a failure). Failed sign-ins are counted per account and per client address; past SIGN_IN_FAILURES_PER_ACCOUNT or _PER_ADDRESS in SIGN_IN_THROTTLE_WINDOW_SECONDS, 429 with Retry-After (at most the window). 401 for a wrong email or password (one answer for both). JSON only (a form body is 415 `UNSUPPORTED_MEDIA_TYPE`); a browser page of another site (its `Origin` or `Sec-Fetch-Site`) is 403 `CROSS_SITE_REQUEST`: a sign-in sets the session cookie, so another site must not make one (login CSRF).',
    tags: TAGS,
    secured: false,
    body: loginBody,
    responses: {
      200: {
        description: 'Signed in',
        schema: signedInSchema,
        headers: { 'Set-Cookie': 'sl_session=…; Path=/api; Max-Age=…; HttpOnly; SameSite=Lax[; Secure]' },
      },
    },
    errors: [401, 403, 415, 429, 503],
  })
  async login(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: z.infer<typeof loginBody>) {
    this.origins.check(req);
    const address = this.addresses.of(req.raw);
    const signed = await this.sessions.signIn(body, address, this.clients.describe(req.headers['user-agent'], address));
    reply.header('set-cookie', sessionCookie(signed.token, this.config.people.session.absoluteMs / 1000, secureCookie(this.config, this.addresses, req)));
    reply.header('cache-control', 'no-store');
    return { ...meView(signed.member, null, signed.tenant, signed.principal.scopes, signed.csrfToken), expiresAt: signed.expiresAt.toISOString() };
  }

  @Post('auth/logout')
  @HttpCode(204)
  @UseGuards(ApiKeyGuard)
  @Contract({
    summary: 'End this session (on every instance within a second) and clear its cookie',
    operationId: 'signOut',
    description: 'With a key: nothing to end, 204.',
    tags: TAGS,
    scope: 'links:read',
    responses: { 204: { description: 'Signed out' } },
  })
  async logout(@Req() req: AuthenticatedRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    if (!req.session) return;
    await this.sessions.signOut(req.session.token, this.addresses.of(req.raw));
    reply.header('set-cookie', sessionCookie('', 0, secureCookie(this.config, this.addresses, req)));
  }

  @Get('me')
  @UseGuards(ApiKeyGuard)
  @Contract({
    summary: 'Who is calling: the person (or key), the tenant, the role, the scopes and the CSRF token of the session',
    operationId: 'getMe',
    tags: TAGS,
    scope: 'links:read',
    responses: { 200: { description: 'The caller', schema: meSchema } },
  })
  async whoAmI(@Req() req: AuthenticatedRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    reply.header('cache-control', 'no-store');
    const principal = req.principal!;
    if (req.session) return meView(req.session.member, null, req.session.tenant, principal.scopes, req.session.csrfToken);
    const tenant = await this.tenants.getTenant(principal.tenantId);
    return meView(null, { id: principal.actor.id, name: principal.actor.name }, tenant, principal.scopes, null);
  }
}

/**
 * Secure over https (SESSION_COOKIE_SECURE=auto): a TLS socket or `X-Forwarded-Proto: https` from a
 * TRUSTED_PROXIES address, as the visitor password cookie decides it, or a console served over https.
 */
export function secureCookie(config: AppConfig, addresses: ClientAddressResolver, req: FastifyRequest): boolean {
  const { cookieSecure, consoleIsHttps } = config.people.session;
  return cookieSecure === 'on' || (cookieSecure === 'auto' && (consoleIsHttps || addresses.isHttps(req.raw)));
}
