import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppConfig } from '@shortlink/config';
import { DomainError, ErrorCode } from '@shortlink/core';
import { MemberService, SecondFactorService, SessionClients, SessionService, SignedIn } from '@shortlink/people-domain';
import { TenantService } from '@shortlink/tenants-domain';
import {
  ApiKeyGuard,
  APP_CONFIG,
  AuthenticatedRequest,
  BrowserOrigins,
  ClientAddressResolver,
  Contract,
  memberView,
  sessionCookie,
} from '@shortlink/nest-platform';
import { secureCookie } from './session.controller';
import {
  acceptBody,
  acceptedSchema,
  codeBody,
  enrolmentSchema,
  invitationBody,
  invitationSchema,
  passwordChangeBody,
  passwordChangedSchema,
  proofBody,
  recoveryCodesSchema,
  secondFactorStatusSchema,
  sessionListSchema,
  sessionParams,
} from './people.schemas';

const TAGS = ['auth'];

/**
 * Accepting an invitation, a person's own sessions, password and second factor (docs/design.md,
 * "People and sessions"). Signing in and out and `GET /api/v1/me` are nest-platform's
 * SessionController, mounted on every app that accepts sessions.
 */
@Controller('api/v1')
export class AuthController {
  constructor(
    @Inject(MemberService) private readonly members: MemberService,
    @Inject(SessionService) private readonly sessions: SessionService,
    @Inject(SecondFactorService) private readonly secondFactor: SecondFactorService,
    @Inject(ClientAddressResolver) private readonly addresses: ClientAddressResolver,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(TenantService) private readonly tenants: TenantService,
    @Inject(SessionClients) private readonly clients: SessionClients,
    @Inject(BrowserOrigins) private readonly origins: BrowserOrigins,
  ) {}

  @Post('auth/invitation')
  @HttpCode(200)
  @Contract({
    summary: 'What an invitation is for: the email, the tenant, the role, until when, and the password the acceptance needs',
    operationId: 'getInvitation',
    description:
      'For the page that accepts it (the token travels in the body: a URL would put it in logs). 400 `INVITATION_INVALID` for an unknown, used or expired token.',
    tags: TAGS,
    secured: false,
    body: invitationBody,
    responses: { 200: { description: 'The invitation', schema: invitationSchema } },
  })
  async invitation(@Res({ passthrough: true }) reply: FastifyReply, @Body() body: z.infer<typeof invitationBody>) {
    const member = await this.members.invitation(body.token);
    const tenant = await this.tenants.getTenant(member.tenantId);
    reply.header('cache-control', 'no-store');
    return {
      email: member.email,
      role: member.role,
      tenant: { name: tenant.name },
      expiresAt: (member.invitationExpiresAt ?? new Date()).toISOString(),
      passwordMinLength: this.config.people.passwordMinLength,
    };
  }

  @Post('auth/accept')
  @HttpCode(200)
  @Contract({
    summary: 'Accept an invitation with a password: the member is active and signed in (a session cookie, as a sign-in gives it)',
    operationId: 'acceptInvitation',
    description:
      '400 `PASSWORD_TOO_WEAK` for a short or common password, 400 `INVITATION_INVALID` for an unknown, used or expired token. Of a suspended tenant the member is accepted but not signed in (`csrfToken` null, no cookie). As for a sign-in, a browser’s request from a page of another origin is 403 `CROSS_SITE_REQUEST`.',
    tags: TAGS,
    secured: false,
    body: acceptBody,
    responses: {
      200: {
        description: 'The member, now active, and the session it signed in',
        schema: acceptedSchema,
        headers: { 'Set-Cookie': 'sl_session=…; Path=/api; Max-Age=…; HttpOnly; SameSite=Lax[; Secure]' },
      },
    },
    errors: [403],
  })
  async accept(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: z.infer<typeof acceptBody>) {
    // It signs in, as a sign-in does: never from another site's page (a person signed in to someone else's account).
    this.origins.check(req);
    const address = this.addresses.of(req.raw);
    const member = await this.members.accept(body, address);
    // Signed in at once, on the host the invitation was opened at (docs/console.md, "One address").
    let signed: SignedIn | null = null;
    try {
      const tenant = await this.tenants.getTenant(member.tenantId);
      signed = await this.sessions.openSession(member, tenant, address, 'password', this.clients.describe(req.headers['user-agent'], address));
    } catch (error) {
      if (!(error instanceof DomainError) || error.code !== ErrorCode.TENANT_SUSPENDED) throw error;
    }
    reply.header('cache-control', 'no-store');
    if (signed)
      reply.header('set-cookie', sessionCookie(signed.token, this.config.people.session.absoluteMs / 1000, secureCookie(this.config, this.addresses, req)));
    return { member: memberView(member), csrfToken: signed?.csrfToken ?? null, expiresAt: signed?.expiresAt.toISOString() ?? null };
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
        client: s.client ?? null,
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

  @Get('me/second-factor')
  @UseGuards(ApiKeyGuard)
  @Contract({
    summary: 'Whether your second factor (TOTP) is on, and whether an enrolment waits for its code',
    operationId: 'getMySecondFactor',
    description: 'For a person signed in (a key gets 403). Never answers the secret.',
    tags: TAGS,
    scope: 'links:read',
    responses: { 200: { description: 'The state', schema: secondFactorStatusSchema } },
  })
  async secondFactorStatus(@Req() req: AuthenticatedRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    reply.header('cache-control', 'no-store');
    return this.secondFactor.status(personOf(req));
  }

  @Post('me/second-factor')
  @HttpCode(200)
  @UseGuards(ApiKeyGuard)
  @Contract({
    summary: 'Start turning on a second factor (TOTP), or moving it to another app: a new secret for the authenticator app',
    operationId: 'startSecondFactor',
    description:
      'For a person signed in (a key gets 403). The factor is on once a code of this secret is confirmed; until then sign-in is unchanged. While a factor is on, this moves it and needs the current one: `code` (of the app in use) or `recoveryCode`, spent here (without: 401 `SECOND_FACTOR_REQUIRED`; wrong: 400 `SECOND_FACTOR_INVALID`, counted like a failed sign-in, 429 past its limits); the move is then confirmed within 10 minutes.',
    tags: TAGS,
    scope: 'links:read',
    body: proofBody.optional(),
    responses: { 200: { description: 'The secret, pending', schema: enrolmentSchema } },
    errors: [400, 401],
  })
  async beginSecondFactor(
    @Req() req: AuthenticatedRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: z.infer<typeof proofBody> | undefined,
  ) {
    reply.header('cache-control', 'no-store');
    return this.secondFactor.begin(personOf(req), body ?? {}, this.addresses.of(req.raw));
  }

  @Post('me/second-factor/confirm')
  @HttpCode(200)
  @UseGuards(ApiKeyGuard)
  @Contract({
    summary: 'Turn the second factor on with a code of the new secret; answers the recovery codes once',
    operationId: 'confirmSecondFactor',
    description:
      '400 `SECOND_FACTOR_INVALID` for a wrong code or no enrolment started; 401 `SECOND_FACTOR_REQUIRED` while a factor is on and the move was not started with it in the last 10 minutes.',
    tags: TAGS,
    scope: 'links:read',
    body: codeBody,
    responses: { 200: { description: 'On', schema: recoveryCodesSchema } },
    errors: [400, 401],
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
    description:
      '400 `SECOND_FACTOR_INVALID` without a valid proof or without a factor on. Wrong codes and recovery codes are counted like failed sign-ins (per account and per client address): past SIGN_IN_FAILURES_PER_ACCOUNT or _PER_ADDRESS, 429 with Retry-After.',
    tags: TAGS,
    scope: 'links:read',
    body: proofBody,
    responses: { 204: { description: 'Off' } },
    errors: [400, 429],
  })
  async disableSecondFactor(@Req() req: AuthenticatedRequest, @Body() body: z.infer<typeof proofBody>): Promise<void> {
    await this.secondFactor.disable(personOf(req), body, this.addresses.of(req.raw));
  }
}

/** The member of a session; a key has no password or second factor of its own. */
function personOf(req: AuthenticatedRequest) {
  if (!req.session) throw new DomainError(ErrorCode.INSUFFICIENT_SCOPE, 'this belongs to a person: sign in with POST /api/v1/auth/login');
  return req.session.member;
}
