import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Tenant, TenantService } from '@shortlink/links-domain';

export type TenantRequest = FastifyRequest & { tenant?: Tenant };

/** Resolves `x-api-key` to a tenant (or throws UNAUTHENTICATED, mapped to 401 by the filter). */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(@Inject(TenantService) private readonly tenants: TenantService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<TenantRequest>();
    request.tenant = await this.tenants.authenticate(request.headers['x-api-key']);
    return true;
  }
}
