import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppConfig } from '@shortlink/config';
import { DomainError, ErrorCode } from '@shortlink/core';
import { MemberService, SecondFactorService, SessionService } from '@shortlink/people-domain';
import { Tenant, TenantService } from '@shortlink/tenants-domain';
import { ApiKeyGuard, APP_CONFIG, AuthenticatedRequest, ClientAddressResolver, Contract, sessionCookie } from '@shortlink/nest-platform';
import { tenantView } from '../admin.controller';
import { memberView } from './members.controller';
import {
  acceptBody,
  codeBody,
  enrolmentSchema,
  loginBody,
  memberSchema,
  meSchema,
  passwordChangeBody,
  passwordChangedSchema,
  proofBody,
  recoveryCodesSchema,
  sessionListSchema,
  sessionParams,
  signedInSchema,
} from './people.schemas';

const TAGS = ['auth'];

/**
 * Accepting an invitation, signing in and out, and who is calling (docs/design.md, "People and
 * sessions"). The session is a cookie (HttpOnly, SameSite=Lax, Secure over https); writes made with
 * it carry the CSRF token `GET /api/v1/me` answers.
 */
@Controller('api/v1')
export class AuthController {
  constructor(
    @Inject(MemberService) private readonly members: MemberService,
    @Inject(SessionService) private readonly sessions: SessionService,
    @Inject(SecondFactorService) private readonly secondFactor: SecondFactorService,
    @Inject(TenantService) private readonly tenants: TenantService,
    @Inject(ClientAddressResolver) private readonly addresses: ClientAddressResolver,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('auth/accept')
  @HttpCode(200)
  @Contract({
    summary: 'Accept an invitation with a password; the member may then sign in',
    operationId: 'acceptInvitation',
    description: '400 `PASSWORD_TOO_WEAK` for a short or common password, 400 `INVITATION_INVALID` for an unknown, used or expired token.',
    tags: TAGS,
    secured: false,
    body: acceptBody,
    responses: { 200: { description: 'The member, now active', schema: z.object({ member: memberSchema }).meta({ id: 'Accepted' }) } },
  })
  async accept(@Req() req: FastifyRequest, @Body() body: z.infer<typeof acceptBody>) {
    return { member: memberView(await this.members.accept(body, this.addresses.of(req.raw))) };
  }

  @Post('auth/login')
  @HttpCode(200)
  @Contract({
    summary: 'Sign in with email and password: answers a session cookie and its CSRF token',
    operationId: 'signIn',
    description:
      'A member with a second factor sends `code` (or `recoveryCode`) too: without it 401 `SECOND_FACTOR_REQUIRED`, a wrong or replayed one 401 `UNAUTHENTICATED` (counted as a failure). Failed sign-ins are counted per account and per client address; past SIGN_IN_FAILURES_PER_ACCOUNT or _PER_ADDRESS in SIGN_IN_THROTTLE_WINDOW_SECONDS, 429 with Retry-After (at most the window). 401 for a wrong email or password (one answer for both).',
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
    errors: [401, 403, 429, 503],
  })
  async login(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: z.infer<typeof loginBody>) {
    const signed = await this.sessions.signIn(body, this.addresses.of(req.raw));
    reply.header('set-cookie', sessionCookie(signed.token, this.config.people.session.absoluteMs / 1000, this.secure(req)));
    reply.header('cache-control', 'no-store');
    return { ...this.me(signed.member, null, signed.tenant, signed.principal.scopes, signed.csrfToken), expiresAt: signed.expiresAt.toISOString() };
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
    reply.header('set-cookie', sessionCookie('', 0, this.secure(req)));
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
    if (req.session) return this.me(req.session.member, null, req.session.tenant, principal.scopes, req.session.csrfToken);
    const tenant = await this.tenants.getTenant(principal.tenantId);
    return this.me(null, { id: principal.actor.id, name: principal.actor.name }, tenant, principal.scopes, null);
  }

  private me(
    member: Parameters<typeof memberView>[0] | null,
    key: { id: string; name: string } | null,
    tenant: Tenant,
    scopes: readonly string[],
    csrfToken: string | null,
  ) {
    return {
      member: member && memberView(member),
      key,
      tenant: tenantView(tenant),
      role: member?.role ?? null,
      scopes: [...scopes] as z.infer<typeof meSchema>['scopes'],
      csrfToken,
    };
  }

  @Get('me/sessions')
  @UseGuards(ApiKeyGuard)
  @Contract({
    summary: 'Your sessions that have not ended, newest first (the one asking is `current`)',
    operationId: 'listMySessions',
    description: 'For a person signed in (a key gets 403).',
    tags: TAGS,
    scope: 'links:read',
    responses: { 200: { description: 'The sessions', schema: sessionListSchema } },
  })
  async listSessions(@Req() req: AuthenticatedRequest) {
    personOf(req);
    const sessions = await this.sessions.listSessions(req.session!);
    return {
      sessions: sessions.map((s) => ({
        id: s.idHash,
        createdAt: s.createdAt.toISOString(),
        lastSeenAt: s.lastSeenAt.toISOString(),
        expiresAt: s.expiresAt.toISOString(),
        current: s.current,
      })),
    };
  }

  @Delete('me/sessions/:id')
  @HttpCode(204)
  @UseGuards(ApiKeyGuard)
  @Contract({
    summary: 'End one of your sessions (another device): refused on every instance within a second',
    operationId: 'endMySession',
    description: '404 `SESSION_NOT_FOUND` for an id that is not one of your sessions.',
    tags: TAGS,
    scope: 'links:read',
    params: sessionParams,
    responses: { 204: { description: 'Ended' } },
    errors: [404],
  })
  async revokeSession(@Req() req: AuthenticatedRequest, @Param('id') id: string): Promise<void> {
    await this.sessions.revokeSession({ member: personOf(req) }, id, this.addresses.of(req.raw));
  }

  @Post('me/password')
  @HttpCode(200)
  @UseGuards(ApiKeyGuard)
  @Contract({
    summary: 'Change your password; your other sessions end (on every instance within a second)',
    operationId: 'changeMyPassword',
    description:
      '403 `PASSWORD_INCORRECT` for a wrong current password (counted like a failed sign-in: 429 past the limit), 400 `PASSWORD_TOO_WEAK` for a weak new one. For a person signed in (a key gets 403).',
    tags: TAGS,
    scope: 'links:read',
    body: passwordChangeBody,
    responses: { 200: { description: 'Changed', schema: passwordChangedSchema } },
  })
  async changePassword(@Req() req: AuthenticatedRequest, @Body() body: z.infer<typeof passwordChangeBody>) {
    personOf(req);
    return this.sessions.changePassword(req.session!, body, this.config.people.passwordMinLength, this.addresses.of(req.raw));
  }

  @Post('me/second-factor')
  @HttpCode(200)
  @UseGuards(ApiKeyGuard)
  @Contract({
    summary: 'Start turning on a second factor (TOTP): a new secret for the authenticator app',
    operationId: 'startSecondFactor',
    description: 'For a person signed in (a key gets 403). The factor is on once a code of this secret is confirmed; until then sign-in is unchanged.',
    tags: TAGS,
    scope: 'links:read',
    responses: { 200: { description: 'The secret, pending', schema: enrolmentSchema } },
  })
  async beginSecondFactor(@Req() req: AuthenticatedRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    reply.header('cache-control', 'no-store');
    return this.secondFactor.begin(personOf(req));
  }

  @Post('me/second-factor/confirm')
  @HttpCode(200)
  @UseGuards(ApiKeyGuard)
  @Contract({
    summary: 'Turn the second factor on with a code of the new secret; answers the recovery codes once',
    operationId: 'confirmSecondFactor',
    description: '400 `SECOND_FACTOR_INVALID` for a wrong code or no enrolment started.',
    tags: TAGS,
    scope: 'links:read',
    body: codeBody,
    responses: { 200: { description: 'On', schema: recoveryCodesSchema } },
  })
  async confirmSecondFactor(@Req() req: AuthenticatedRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: z.infer<typeof codeBody>) {
    reply.header('cache-control', 'no-store');
    return this.secondFactor.confirm(personOf(req), body.code, this.addresses.of(req.raw));
  }

  @Post('me/second-factor/disable')
  @HttpCode(204)
  @UseGuards(ApiKeyGuard)
  @Contract({
    summary: 'Turn the second factor off, proven by a current code or a recovery code',
    operationId: 'disableSecondFactor',
    description: '400 `SECOND_FACTOR_INVALID` without a valid proof or without a factor on.',
    tags: TAGS,
    scope: 'links:read',
    body: proofBody,
    responses: { 204: { description: 'Off' } },
  })
  async disableSecondFactor(@Req() req: AuthenticatedRequest, @Body() body: z.infer<typeof proofBody>): Promise<void> {
    await this.secondFactor.disable(personOf(req), body, this.addresses.of(req.raw));
  }

  /**
   * Secure over https (SESSION_COOKIE_SECURE=auto): a TLS socket or `X-Forwarded-Proto: https` from a
   * TRUSTED_PROXIES address, as the visitor password cookie decides it, or a console served over https.
   */
  private secure(req: FastifyRequest): boolean {
    const { cookieSecure, consoleIsHttps } = this.config.people.session;
    return cookieSecure === 'on' || (cookieSecure === 'auto' && (consoleIsHttps || this.addresses.isHttps(req.raw)));
  }
}

/** The member of a session; a key has no password or second factor of its own. */
function personOf(req: AuthenticatedRequest) {
  if (!req.session) throw new DomainError(ErrorCode.INSUFFICIENT_SCOPE, 'this belongs to a person: sign in with POST /api/v1/auth/login');
  return req.session.member;
}
