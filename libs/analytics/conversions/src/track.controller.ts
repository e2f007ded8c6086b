import { Body, Controller, Get, HttpCode, Inject, Post, Put, Req, UseGuards } from '@nestjs/common';
import { ConversionCaps, ConversionEvent, ConversionService, TrackResult } from '@shortlink/clicks-domain';
import type { AppConfig } from '@shortlink/config';
import { AuditLog, diffOf } from '@shortlink/audit-domain';
import { APP_CONFIG, ApiKeyGuard, auditContextOf, AuthenticatedRequest, Contract } from '@shortlink/nest-platform';
import { Plan, PlanRateLimiter } from '@shortlink/tenants-domain';
import { conversionSettingsSchema, leadSchema, saleSchema, trackedSchema } from './track.schemas';

const TAGS = ['conversions'];

/** An event as the track API answers it and the webhooks carry it (the metadata stays with the tenant's own request). */
export const conversionView = (e: ConversionEvent) => ({
  id: e.id,
  kind: e.kind,
  link: { domain: e.domain, code: e.code },
  customerId: e.customerId,
  eventName: e.eventName,
  clickId: e.clickId,
  amount: e.amount,
  currency: e.currency,
  invoiceId: e.invoiceId,
  at: new Date(e.at).toISOString(),
});

/**
 * A plan's caps on conversions (docs/analytics.md, "Conversions"): its metadata bytes, and its
 * leads and sales per sliding 30 days (429 CONVERSION_LIMIT_REACHED beyond).
 */
export const capsOf = (config: AppConfig, limiter: PlanRateLimiter, tenantId: string, plan: Plan): ConversionCaps => ({
  maxMetadataBytes: config.plans[plan].conversionMetadataBytes,
  admit: () => limiter.conversion(tenantId, plan),
});

const answer = (r: TrackResult) => ({ duplicate: r.duplicate, event: r.event ? conversionView(r.event) : null });

/**
 * Leads and sales reported by a tenant's backend (docs/analytics.md, "Conversions"), with a key of
 * the scope `conversions:write`. 201 when counted; 200 with `duplicate: true` when counted before.
 */
@Controller('api/v1/track')
@UseGuards(ApiKeyGuard)
export class TrackController {
  constructor(
    @Inject(ConversionService) private readonly conversions: ConversionService,
    @Inject(PlanRateLimiter) private readonly limiter: PlanRateLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private caps(req: AuthenticatedRequest): ConversionCaps {
    return capsOf(this.config, this.limiter, req.principal!.tenantId, req.principal!.plan);
  }

  @Post('lead')
  @HttpCode(201)
  @Contract({
    summary: 'Report a lead: a customer who came by a click of one of your links',
    operationId: 'trackLead',
    description:
      'The click id names the click (and so the link) that brought the customer; one lead per customer: a second report of the same customerId answers `duplicate: true`. 404 `CLICK_ID_NOT_FOUND` for a click id that is not one of your links’ clicks or is older than CONVERSION_CLICK_ID_TTL_DAYS (90); nothing is stored then. 429 `CONVERSION_LIMIT_REACHED` (with Retry-After) once the plan’s leads and sales of 30 days are counted (PLAN_*_CONVERSIONS_PER_MONTH; a duplicate costs nothing); metadata beyond the plan’s PLAN_*_CONVERSION_METADATA_BYTES is 400 `VALIDATION_FAILED` (`field: metadata`).',
    tags: TAGS,
    scope: 'conversions:write',
    body: leadSchema,
    responses: { 201: { description: 'Counted (or, `duplicate`, counted before)', schema: trackedSchema } },
    errors: [404, 429, 503],
  })
  async lead(@Req() req: AuthenticatedRequest, @Body() body: unknown) {
    return answer(await this.conversions.lead(req.principal!.tenantId, body, this.caps(req)));
  }

  @Post('sale')
  @HttpCode(201)
  @Contract({
    summary: 'Report a sale (or, with a negative amount, a refund) of a customer who came as a lead',
    operationId: 'trackSale',
    description:
      'Attributed to the link of the customer’s first lead (first touch), or of its latest reported click when the tenant chose last touch (`PUT /api/v1/conversions/settings`). With an invoiceId a sale counts once however often it is reported (`duplicate: true`). 404 `CUSTOMER_NOT_FOUND` when no lead of this customer was reported. The plan’s caps as for leads (429 `CONVERSION_LIMIT_REACHED`).',
    tags: TAGS,
    scope: 'conversions:write',
    body: saleSchema,
    responses: { 201: { description: 'Counted (or, `duplicate`, counted before)', schema: trackedSchema } },
    errors: [404, 429, 503],
  })
  async sale(@Req() req: AuthenticatedRequest, @Body() body: unknown) {
    return answer(await this.conversions.sale(req.principal!.tenantId, body, this.caps(req)));
  }
}

/** The tenant's conversion settings (docs/analytics.md, "Conversions"): its attribution model. */
@Controller('api/v1/conversions/settings')
@UseGuards(ApiKeyGuard)
export class ConversionSettingsController {
  constructor(
    @Inject(ConversionService) private readonly conversions: ConversionService,
    @Inject(AuditLog) private readonly audit: AuditLog,
  ) {}

  @Get()
  @Contract({
    summary: 'Read the tenant’s conversion settings (its attribution model)',
    operationId: 'getConversionSettings',
    tags: TAGS,
    scope: 'conversions:write',
    responses: { 200: { description: 'The settings', schema: conversionSettingsSchema } },
  })
  async read(@Req() req: AuthenticatedRequest) {
    return this.conversions.settings(req.principal!.tenantId);
  }

  @Put()
  @Contract({
    summary: 'Set the tenant’s attribution model: first touch (the default) or last touch',
    operationId: 'setConversionSettings',
    description: 'Applies to the sales reported from then on; sales counted before stay where they were counted.',
    tags: TAGS,
    scope: 'conversions:write',
    body: conversionSettingsSchema,
    responses: { 200: { description: 'The settings', schema: conversionSettingsSchema } },
    errors: [400],
  })
  async configure(@Req() req: AuthenticatedRequest, @Body() body: unknown) {
    const tenantId = req.principal!.tenantId;
    const before = await this.conversions.settings(tenantId);
    const after = await this.conversions.configure(tenantId, body);
    const changes = diffOf(before, after, ['attribution']);
    if (changes)
      await this.audit.record(
        this.audit.entry(auditContextOf(req), {
          log: tenantId,
          action: 'conversions.settings_changed',
          target: { type: 'tenant', id: tenantId, domain: null },
          changes,
        }),
      );
    return after;
  }
}
