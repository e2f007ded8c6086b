import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Req, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { MemberService } from '@shortlink/people-domain';
import { managerOf, PlanRateLimiter, TenantService } from '@shortlink/tenants-domain';
import { ApiKeyGuard, auditContextOf, AuthenticatedRequest, Contract, memberView } from '@shortlink/nest-platform';
import { inviteBody, invitedSchema, memberListSchema, memberParams, memberSchema, roleBody } from './people.schemas';

const TAGS = ['members'];

/**
 * A tenant's members (docs/design.md, "People and sessions" and "Security model"): for owners and
 * admins, whose roles hold `members:write`, and for the keys that may hold it (an owner's, acting as
 * that owner; the tenant's first key while the tenant has no owner); only owners touch owners, and a
 * tenant keeps one active owner (409 LAST_OWNER).
 */
@Controller('api/v1/members')
@UseGuards(ApiKeyGuard)
export class MembersController {
  constructor(
    @Inject(MemberService) private readonly members: MemberService,
    @Inject(TenantService) private readonly tenants: TenantService,
    @Inject(PlanRateLimiter) private readonly plans: PlanRateLimiter,
  ) {}

  @Get()
  @Contract({
    summary: 'List the tenant’s members, invited ones too',
    operationId: 'listMembers',
    tags: TAGS,
    scope: 'members:write',
    responses: { 200: { description: 'The members', schema: memberListSchema } },
  })
  async list(@Req() req: AuthenticatedRequest) {
    return { members: (await this.members.listMembers(req.principal!.tenantId)).map(memberView) };
  }

  @Post()
  @HttpCode(201)
  @Contract({
    summary: 'Invite a person by email with a role; the invitation token is in this answer only',
    operationId: 'inviteMember',
    description:
      'The invitation is mailed when SMTP_URL is configured (`invitation.mailed`). Only owners (and an owner’s keys, or the first key of a tenant without an owner) may invite an owner. 409 `MEMBER_EXISTS` when the email is a member already. ' +
      'A tenant sends at most its plan’s invitations an hour (PLAN_FREE_INVITATIONS_PER_HOUR, PLAN_PAID_INVITATIONS_PER_HOUR; every request counts): 429 `INVITATION_LIMIT_REACHED` with Retry-After beyond.',
    tags: TAGS,
    scope: 'members:write',
    body: inviteBody,
    responses: { 201: { description: 'Invited', schema: invitedSchema } },
    errors: [403, 409, 429],
  })
  async invite(@Req() req: AuthenticatedRequest, @Body() body: z.infer<typeof inviteBody>) {
    const principal = req.principal!;
    // Before anything is stored or mailed: invitations reach addresses outside the tenant (docs/design.md, "Tenants, keys and plans").
    await this.plans.invitation(principal.tenantId, principal.plan);
    const tenant = await this.tenants.getTenant(principal.tenantId);
    const { member, invitation } = await this.members.invite(principal.tenantId, managerOf(principal), body, auditContextOf(req), tenant.name);
    return { member: memberView(member), invitation: { ...invitation, expiresAt: invitation.expiresAt.toISOString() } };
  }

  @Get(':id')
  @Contract({
    summary: 'Read a member',
    operationId: 'getMember',
    tags: TAGS,
    scope: 'members:write',
    params: memberParams,
    responses: { 200: { description: 'The member', schema: memberSchema } },
    errors: [404],
  })
  async get(@Req() req: AuthenticatedRequest, @Param('id') id: string) {
    return memberView(await this.members.getMember(req.principal!.tenantId, id));
  }

  @Patch(':id')
  @Contract({
    summary: 'Change a member’s role (at once, on every instance within a second)',
    operationId: 'updateMember',
    description:
      'Only owners (and an owner’s keys) may give or take the owner role. A demotion lowers the person’s keys too, within a second. 409 `LAST_OWNER` when it would leave the tenant without an active owner.',
    tags: TAGS,
    scope: 'members:write',
    params: memberParams,
    body: roleBody,
    responses: { 200: { description: 'The member', schema: memberSchema } },
    errors: [403, 404, 409],
  })
  async changeRole(@Req() req: AuthenticatedRequest, @Param('id') id: string, @Body() body: z.infer<typeof roleBody>) {
    const principal = req.principal!;
    return memberView(await this.members.changeRole(principal.tenantId, managerOf(principal), id, body.role, auditContextOf(req)));
  }

  @Delete(':id')
  @HttpCode(204)
  @Contract({
    summary: 'Remove a member; every session of it ends and every key acting for it is suspended (on every instance within a second)',
    operationId: 'removeMember',
    description:
      'Only owners (and an owner’s keys) may remove an owner. The member’s keys answer 403 `KEY_SUSPENDED` until an owner transfers them to another member (POST /api/v1/keys/{id}/transfer) or revokes them. 409 `LAST_OWNER` for the last active owner.',
    tags: TAGS,
    scope: 'members:write',
    params: memberParams,
    responses: { 204: { description: 'Removed' } },
    errors: [403, 404, 409],
  })
  async remove(@Req() req: AuthenticatedRequest, @Param('id') id: string): Promise<void> {
    const principal = req.principal!;
    await this.members.removeMember(principal.tenantId, managerOf(principal), id, auditContextOf(req));
  }
}
