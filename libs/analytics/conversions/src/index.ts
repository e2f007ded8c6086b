// The conversions API of the generation app (docs/analytics.md, "Conversions").
export { CONVERSIONS_PORTS, ConversionsModule } from './conversions.module';
export { STRIPE_EVENTS, StripeReceiver, type StripeOutcome, type StripeSettingsView } from './stripe-receiver';
