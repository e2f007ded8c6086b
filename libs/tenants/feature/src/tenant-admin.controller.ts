import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Req, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { checkEmail, MemberService } from '@shortlink/people-domain';
import { TenantDirectory, TenantService } from '@shortlink/tenants-domain';
import { ApiKeyGuard, auditContextOf, AuthenticatedRequest, Contract, memberView, tenantView } from '@shortlink/nest-platform';
import { keyView } from './keys.controller';
import {
  domainBody,
  domainListSchema,
  domainParams,
  tenantCreatedSchema,
  tenantCreationSchema,
  tenantEditSchema,
  tenantPageQuery,
  tenantPageSchema,
  tenantParams,
  tenantSchema,
} from './tenant.schemas';

const TAGS = ['admin'];

/**
 * The operator's API of tenants (docs/design.md, "Tenants, keys and plans"): every route needs the `admin`
 * scope, and every change is recorded in the operator log (docs/design.md, "Audit log").
 */
@Controller('api/v1/admin')
@UseGuards(ApiKeyGuard)
export class TenantAdminController {
  constructor(
    @Inject(TenantService) private readonly tenants: TenantService,
    @Inject(TenantDirectory) private readonly tenantDomains: TenantDirectory,
    @Inject(MemberService) private readonly members: MemberService,
  ) {}

  @Post('tenants')
  @HttpCode(201)
  @Contract({
    operationId: 'createTenant',
    summary: 'Create a tenant and its first key, and invite its first owner by email',
    description:
      'With `ownerEmail`, the person is invited as the tenant’s owner (`owner.invitation`, shown once; mailed with SMTP_URL). The tenant and key are created first; were the invitation to fail, the first key (which has `members:write` while the tenant has no active owner) can invite the owner.',
    tags: TAGS,
    scope: 'admin',
    body: tenantCreationSchema,
    responses: { 201: { description: 'Created; the key is shown this once', schema: tenantCreatedSchema } },
  })
  async createTenant(@Req() req: AuthenticatedRequest, @Body() body: z.infer<typeof tenantCreationSchema>) {
    // A bad email is refused before anything is created.
    const ownerEmail = body.ownerEmail === undefined ? undefined : checkEmail(body.ownerEmail);
    const audit = auditContextOf(req);
    const { tenant, issued } = await this.tenants.createTenant(body, audit);
    const created = { tenant: tenantView(tenant), apiKey: issued.apiKey, key: keyView(issued.key, issued.standing) };
    if (ownerEmail === undefined) return created;
    // The invitation goes to the tenant's own log, by the operator.
    const { member, invitation } = await this.members.invite(tenant.id, { kind: 'key' }, { email: ownerEmail, role: 'owner' }, audit, tenant.name);
    return { ...created, owner: { member: memberView(member), invitation: { ...invitation, expiresAt: invitation.expiresAt.toISOString() } } };
  }

  @Get('tenants')
  @Contract({
    summary: 'List tenants by id',
    operationId: 'listTenants',
    tags: TAGS,
    scope: 'admin',
    query: tenantPageQuery,
    responses: { 200: { description: 'A page of tenants', schema: tenantPageSchema } },
  })
  async listTenants(@Query() query: z.infer<typeof tenantPageQuery>) {
    const page = await this.tenants.listTenants(query.cursor ?? null, query.limit + 1);
    const tenants = page.slice(0, query.limit);
    return { tenants: tenants.map(tenantView), nextCursor: page.length > query.limit ? tenants[tenants.length - 1].id : null };
  }

  @Get('tenants/:tenantId')
  @Contract({
    summary: 'Read a tenant',
    operationId: 'getTenant',
    tags: TAGS,
    scope: 'admin',
    params: tenantParams,
    responses: { 200: { description: 'The tenant', schema: tenantSchema } },
    errors: [404],
  })
  async getTenant(@Param('tenantId') tenantId: string) {
    return tenantView(await this.tenants.getTenant(tenantId));
  }

  @Patch('tenants/:tenantId')
  @Contract({
    summary: 'Change a tenant’s plan or name, suspend or reactivate it',
    operationId: 'updateTenant',
    tags: TAGS,
    scope: 'admin',
    params: tenantParams,
    body: tenantEditSchema,
    responses: { 200: { description: 'The tenant', schema: tenantSchema } },
    errors: [404],
  })
  async updateTenant(@Req() req: AuthenticatedRequest, @Param('tenantId') tenantId: string, @Body() body: z.infer<typeof tenantEditSchema>) {
    return tenantView(await this.tenants.updateTenant(tenantId, body, auditContextOf(req)));
  }

  @Get('tenants/:tenantId/domains')
  @Contract({
    summary: 'A tenant’s own domains',
    operationId: 'listTenantDomains',
    tags: TAGS,
    scope: 'admin',
    params: tenantParams,
    responses: { 200: { description: 'The domains', schema: domainListSchema } },
    errors: [404],
  })
  async domains(@Param('tenantId') tenantId: string) {
    await this.tenants.getTenant(tenantId);
    return { domains: await this.tenants.domainsOf(tenantId) };
  }

  @Post('tenants/:tenantId/domains')
  @HttpCode(201)
  @Contract({
    summary: 'Give a tenant a domain of its own',
    operationId: 'addTenantDomain',
    description:
      'The tenant may then create links on it; the redirect serves them by Host. Point the domain’s DNS at the redirect app. ' +
      '409 `DOMAIN_TAKEN` when another tenant has it, or when it is one of the service’s domains or a name under one (`x.sho.rt`).',
    tags: TAGS,
    scope: 'admin',
    params: tenantParams,
    body: domainBody,
    responses: { 201: { description: 'Added', schema: domainBody } },
    errors: [404, 409],
  })
  async addDomain(@Req() req: AuthenticatedRequest, @Param('tenantId') tenantId: string, @Body() body: z.infer<typeof domainBody>) {
    const domain = await this.tenants.addDomain(tenantId, body.domain, auditContextOf(req));
    // This instance's URL policy refuses targets on it from now on; the others within their refresh.
    await this.tenantDomains.refresh();
    return { domain };
  }

  @Delete('tenants/:tenantId/domains/:domain')
  @HttpCode(204)
  @Contract({
    summary: 'Take a domain from a tenant (its links there stop resolving)',
    operationId: 'removeTenantDomain',
    tags: TAGS,
    scope: 'admin',
    params: domainParams,
    responses: { 204: { description: 'Removed' } },
    errors: [404],
  })
  async removeDomain(@Req() req: AuthenticatedRequest, @Param('tenantId') tenantId: string, @Param('domain') domain: string): Promise<void> {
    await this.tenants.removeDomain(tenantId, domain, auditContextOf(req));
    await this.tenantDomains.refresh();
  }
}
