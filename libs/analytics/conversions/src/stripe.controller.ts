import { Body, Controller, Delete, Get, HttpCode, Inject, Post, Put, Query, Req, UseGuards } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { AuditLog } from '@shortlink/audit-domain';
import { ApiKeyGuard, auditContextOf, AuthenticatedRequest, Contract, rawBodyOf } from '@shortlink/nest-platform';
import { conversionView } from './track.controller';
import { StripeOutcome, StripeReceiver } from './stripe-receiver';
import { stripeEventBody, stripeOutcomeSchema, stripeReceiverQuery, stripeSettingsBody, stripeSettingsSchema, stripeSignatureHeader } from './stripe.schemas';
import type { TrackResult } from '@shortlink/clicks-domain';

const TAGS = ['conversions'];
const tracked = (r: TrackResult | null) => (r ? { duplicate: r.duplicate, event: r.event ? conversionView(r.event) : null } : null);
const answer = (o: StripeOutcome) => ({ ...o, lead: tracked(o.lead), sale: tracked(o.sale) });

/**
 * The Stripe receiver (docs/stripe.md): a tenant configures the signing secret of the webhook
 * endpoint it created in Stripe (`PUT`), then Stripe posts its signed events to `POST
 * /api/v1/integrations/stripe?tenant=<id>` (no API key: the signature authenticates).
 */
@Controller('api/v1/integrations/stripe')
export class StripeController {
  constructor(
    @Inject(StripeReceiver) private readonly receiver: StripeReceiver,
    @Inject(AuditLog) private readonly audit: AuditLog,
  ) {}

  @Put()
  @UseGuards(ApiKeyGuard)
  @Contract({
    summary: 'Configure the Stripe receiver: the signing secret of your Stripe webhook endpoint',
    operationId: 'configureStripe',
    description:
      'Create a webhook endpoint in Stripe for `checkout.session.completed` and `invoice.paid` with the URL of `endpointPath` on this host, then give its signing secret here. The secret is sealed at rest and never answered (its last four characters only); a second PUT replaces it. 400 `VALIDATION_FAILED` (`field: webhookSecret`) for a value that is not a `whsec_…` secret.',
    tags: TAGS,
    scope: 'conversions:write',
    body: stripeSettingsBody,
    responses: { 200: { description: 'The receiver, as configured (no secret)', schema: stripeSettingsSchema } },
    errors: [400],
  })
  async configure(@Req() req: AuthenticatedRequest, @Body() body: z.infer<typeof stripeSettingsBody>) {
    const tenantId = req.principal!.tenantId;
    const view = await this.receiver.configure(tenantId, body.webhookSecret);
    // The fact, never the secret (docs/design.md, "Audit log").
    await this.audit.record(
      this.audit.entry(auditContextOf(req), {
        log: tenantId,
        action: 'stripe.configured',
        target: { type: 'tenant', id: tenantId, domain: null },
        details: { replaced: view.createdAt !== view.updatedAt },
      }),
    );
    return view;
  }

  @Get()
  @UseGuards(ApiKeyGuard)
  @Contract({
    summary: 'Read the Stripe receiver (never its secret)',
    operationId: 'getStripe',
    description: '404 `STRIPE_NOT_CONFIGURED` when there is none.',
    tags: TAGS,
    scope: 'conversions:write',
    responses: { 200: { description: 'The receiver', schema: stripeSettingsSchema } },
    errors: [404],
  })
  async read(@Req() req: AuthenticatedRequest) {
    return this.receiver.view(req.principal!.tenantId);
  }

  @Delete()
  @HttpCode(204)
  @UseGuards(ApiKeyGuard)
  @Contract({
    summary: 'Remove the Stripe receiver (its deliveries are refused from then on)',
    operationId: 'deleteStripe',
    description: '404 `STRIPE_NOT_CONFIGURED` when there is none.',
    tags: TAGS,
    scope: 'conversions:write',
    responses: { 204: { description: 'Removed' } },
    errors: [404],
  })
  async remove(@Req() req: AuthenticatedRequest): Promise<void> {
    const tenantId = req.principal!.tenantId;
    await this.receiver.remove(tenantId);
    await this.audit.record(
      this.audit.entry(auditContextOf(req), { log: tenantId, action: 'stripe.removed', target: { type: 'tenant', id: tenantId, domain: null } }),
    );
  }

  @Post()
  @HttpCode(200)
  @Contract({
    summary: 'Stripe’s webhook: a signed event (sent by Stripe, not by you)',
    operationId: 'receiveStripeEvent',
    description:
      'Verified with the `stripe` package against the tenant’s secret (the HMAC-SHA256 of the raw body in Stripe-Signature, at most five minutes old): 400 `STRIPE_SIGNATURE_INVALID` otherwise, and 404 `STRIPE_NOT_CONFIGURED` for a tenant without a receiver. `checkout.session.completed` with a click id (`client_reference_id`, or `metadata.sl_cid`) reports a lead and a sale; with a known customer (`metadata.customerId`, or the Stripe customer of an earlier checkout) a sale; `invoice.paid` of a known customer a sale. A sale counts once per invoice id (else per event id): Stripe’s retries answer `duplicate`. Every other event, and one of no click and no known customer, is answered 200 `ignored` with the reason. 503 `DEPENDENCY_UNAVAILABLE` when the bus did not take the event (Stripe sends it again).',
    tags: TAGS,
    secured: false,
    query: stripeReceiverQuery,
    headers: stripeSignatureHeader,
    body: stripeEventBody,
    responses: { 200: { description: 'Received: what was counted, or why nothing was', schema: stripeOutcomeSchema } },
    errors: [400, 404, 503],
  })
  async receive(@Req() req: FastifyRequest, @Query() query: z.infer<typeof stripeReceiverQuery>) {
    const signature = req.headers['stripe-signature'];
    return answer(await this.receiver.receive(query.tenant, rawBodyOf(req), typeof signature === 'string' ? signature : undefined));
  }
}
