import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Req, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import {
  challengePath,
  DomainOwnershipService,
  OwnershipMethod,
  TenantDirectory,
  TenantDomain,
  txtRecordName,
  txtRecordValue,
} from '@shortlink/tenants-domain';
import { ApiKeyGuard, auditContextOf, AuthenticatedRequest, Contract } from '@shortlink/nest-platform';
import { domainAddSchema, domainOwnershipSchema, ownedDomainParams } from './domain-ownership.schemas';

const TAGS = ['domains'];

/** The ownership methods of the configuration (DOMAIN_VERIFICATION_METHODS): the records an answer shows. */
export const DOMAIN_METHODS = Symbol('DOMAIN_METHODS');

/**
 * A tenant's own domains and their proof (docs/design.md, "Custom domains and TLS"): add one (capped
 * per plan), read the DNS record and the HTTP token that prove it, ask for a check, remove it. Until
 * verified a domain serves nothing and carries no link.
 */
@Controller('api/v1/domains')
@UseGuards(ApiKeyGuard)
export class DomainOwnershipController {
  constructor(
    @Inject(DomainOwnershipService) private readonly ownership: DomainOwnershipService,
    @Inject(TenantDirectory) private readonly directory: TenantDirectory,
    @Inject(DOMAIN_METHODS) private readonly methods: readonly OwnershipMethod[],
  ) {}

  @Post()
  @HttpCode(201)
  @Contract({
    summary: 'Add a domain of your own; the answer says how to prove it',
    operationId: 'addDomain',
    description:
      'The domain is pending until a check finds its TXT record or its HTTP token (checked after DOMAIN_FIRST_CHECK_MS, then with backoff; or at once with `POST /api/v1/domains/{domain}/ownership/check`). ' +
      '409 `DOMAIN_TAKEN` when a tenant holds it, or when it is one of the service’s domains or a name under one; 403 `DOMAIN_LIMIT_REACHED` at the plan’s number of domains.',
    tags: TAGS,
    scope: 'links:write',
    body: domainAddSchema,
    responses: { 201: { description: 'Added, pending', schema: domainOwnershipSchema } },
    errors: [403, 409],
  })
  async add(@Req() req: AuthenticatedRequest, @Body() body: z.infer<typeof domainAddSchema>) {
    const added = await this.ownership.add(req.principal!, body.domain, auditContextOf(req));
    // This instance's URL policy refuses targets on it from now on, and its redirect table has its token; the others within their refresh.
    await this.directory.refresh();
    return this.view(added);
  }

  @Get(':domain/ownership')
  @Contract({
    summary: 'Where a domain of yours stands: its status, the record that proves it, its last check and certificate',
    operationId: 'getDomainOwnership',
    tags: TAGS,
    scope: 'links:read',
    params: ownedDomainParams,
    responses: { 200: { description: 'The domain', schema: domainOwnershipSchema } },
    errors: [404],
  })
  async get(@Req() req: AuthenticatedRequest, @Param('domain') domain: string) {
    return this.view(await this.ownership.get(req.principal!.tenantId, domain));
  }

  @Post(':domain/ownership/check')
  @HttpCode(200)
  @Contract({
    summary: 'Check a domain now (after creating its record)',
    operationId: 'checkDomainOwnership',
    description:
      'Runs the check at once and answers where the domain then stands (`status` verified, or pending with `lastFailure`); automatic retries start again for DOMAIN_RETRY_WINDOW_HOURS. ' +
      'A check already running elsewhere is not run twice: the domain is answered as it stands. A domain an operator gave is not checked.',
    tags: TAGS,
    scope: 'links:write',
    params: ownedDomainParams,
    responses: { 200: { description: 'The domain after the check', schema: domainOwnershipSchema } },
    errors: [404],
  })
  async check(@Req() req: AuthenticatedRequest, @Param('domain') domain: string) {
    const checked = await this.ownership.checkNow(req.principal!.tenantId, domain, auditContextOf(req));
    await this.directory.refresh();
    return this.view(checked);
  }

  @Delete(':domain')
  @HttpCode(204)
  @Contract({
    summary: 'Remove a domain of yours (its links there stop resolving, its settings are reset)',
    operationId: 'removeDomain',
    tags: TAGS,
    scope: 'links:write',
    params: ownedDomainParams,
    responses: { 204: { description: 'Removed' } },
    errors: [404],
  })
  async remove(@Req() req: AuthenticatedRequest, @Param('domain') domain: string): Promise<void> {
    await this.ownership.remove(req.principal!.tenantId, domain, auditContextOf(req));
    await this.directory.refresh();
  }

  private view(d: TenantDomain): z.infer<typeof domainOwnershipSchema> {
    const iso = (t: Date | null) => t?.toISOString() ?? null;
    const token = d.token;
    return {
      domain: d.domain,
      status: d.status,
      verifiedBy: d.verifiedBy,
      verifiedAt: iso(d.verifiedAt),
      checkedAt: iso(d.checkedAt),
      nextCheckAt: iso(d.nextCheckAt),
      failures: d.failures,
      lastFailure: d.lastFailure,
      records:
        token === null
          ? null
          : {
              txt: this.methods.includes('dns') ? { name: txtRecordName(d.domain), value: txtRecordValue(token) } : null,
              http: this.methods.includes('http') ? { url: `http://${d.domain}${challengePath(token)}`, body: token } : null,
            },
      certificate: d.certificate && { expiresAt: iso(d.certificate.expiresAt), checkedAt: d.certificate.checkedAt.toISOString(), error: d.certificate.error },
    };
  }
}
