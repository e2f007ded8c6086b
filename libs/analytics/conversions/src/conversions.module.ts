import { Module } from '@nestjs/common';
import type { AppConfig } from '@shortlink/config';
import { ClickIds, CONVERSION_EVENT_SINK, CONVERSION_STORE, ConversionEventSink, ConversionService, ConversionStore } from '@shortlink/clicks-domain';
import { CODE_SECRET, LINK_REPOSITORY, LinkRepository } from '@shortlink/links-domain';
import { APP_CONFIG } from '@shortlink/nest-platform';
import { PlanRateLimiter, TENANT_STORE, TenantStore } from '@shortlink/tenants-domain';
import { EventPublisher, SecretBox } from '@shortlink/webhooks-domain';
import { capsOf, ConversionSettingsController, conversionView, TrackController } from './track.controller';
import { StripeController } from './stripe.controller';
import { StripeReceiver } from './stripe-receiver';

/** The ports the track API injects (the generation app). */
export const CONVERSIONS_PORTS: readonly symbol[] = [CONVERSION_STORE, CONVERSION_EVENT_SINK, LINK_REPOSITORY, CODE_SECRET, TENANT_STORE];

/**
 * Conversions (docs/analytics.md, "Conversions"): `POST /api/v1/track/lead` and `/sale`, and the
 * Stripe receiver (`/api/v1/integrations/stripe`, docs/stripe.md). Each event
 * counted goes to the conversions topic (analytics counts it) and, as `lead.created` or
 * `sale.created`, to the webhooks' events topic (the EventPublisher of the webhooks context).
 */
@Module({
  controllers: [TrackController, ConversionSettingsController, StripeController],
  providers: [
    {
      provide: ConversionService,
      inject: [CONVERSION_STORE, CONVERSION_EVENT_SINK, LINK_REPOSITORY, CODE_SECRET, APP_CONFIG, EventPublisher],
      useFactory: (
        store: ConversionStore,
        sink: ConversionEventSink,
        repository: LinkRepository,
        codeSecret: string,
        config: AppConfig,
        events: EventPublisher,
      ) =>
        new ConversionService(
          {
            store,
            sink,
            // The click ids' key is derived from the code secret, as the redirect's (docs/design.md, "Conversions").
            clickIds: new ClickIds(codeSecret),
            links: { linkById: (id) => repository.findById(id) },
            observer: (e) =>
              events.publish([events.event(e.kind === 'lead' ? 'lead.created' : 'sale.created', e.tenantId, { conversion: conversionView(e) }, e.at)]),
          },
          { clickIdTtlDays: config.conversions.clickIdTtlDays, maxMetadataBytes: config.conversions.maxMetadataBytes },
        ),
    },
    {
      // The Stripe receiver (docs/stripe.md): its secrets sealed as the webhooks' are.
      provide: StripeReceiver,
      inject: [CONVERSION_STORE, ConversionService, CODE_SECRET, TENANT_STORE, PlanRateLimiter, APP_CONFIG],
      useFactory: (
        store: ConversionStore,
        conversions: ConversionService,
        codeSecret: string,
        tenants: TenantStore,
        limiter: PlanRateLimiter,
        config: AppConfig,
      ) =>
        new StripeReceiver({
          store,
          conversions,
          box: new SecretBox(codeSecret),
          // The tenant's plan, as the track API has it from the key: its caps apply to Stripe's events too.
          caps: async (tenantId) => {
            const tenant = await tenants.findTenant(tenantId);
            return tenant ? capsOf(config, limiter, tenantId, tenant.plan) : {};
          },
        }),
    },
  ],
})
export class ConversionsModule {}
