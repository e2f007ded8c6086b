import { DynamicModule, Global, Module, Provider, Type } from '@nestjs/common';
import type { AppConfig } from '@shortlink/config';
import type { AuditContext } from '@shortlink/audit-domain';
import { AUDIT_PORTS, AuditModule, LinkAudit } from '@shortlink/audit-feature';
import { ConsoleModule } from '@shortlink/console-feature';
import { CONVERSIONS_PORTS, ConversionsModule } from '@shortlink/conversions-feature';
import { everyHook, LINK_CHANGE_HOOKS, LINK_COMMANDS, LinkChangeHooks, LinkCommands, LinkService } from '@shortlink/links-domain';
import { LINKS_PORTS, LinksModule } from '@shortlink/links-feature';
import { API_ACCESS_MODULE_PORTS, ApiAccessModule } from '@shortlink/nest-platform';
import { PEOPLE_PORTS, PeopleModule } from '@shortlink/people-feature';
import { SAFETY_PORTS, SafetyModule, SafetyScreeningModule } from '@shortlink/safety-feature';
import { TENANTS_PORTS, TenantsModule } from '@shortlink/tenants-feature';
import { DOMAIN_OWNERSHIP_EVENTS } from '@shortlink/tenants-domain';
import { DomainWebhookEvents, LinkWebhookEvents, WEBHOOKS_PORTS, WebhooksModule } from '@shortlink/webhooks-feature';

/** The ports the generation app injects; the composition binds them (wiring, or a shared bridge). */
export const GENERATION_PORTS: readonly symbol[] = [
  ...new Set([
    ...API_ACCESS_MODULE_PORTS,
    ...TENANTS_PORTS,
    ...LINKS_PORTS,
    ...PEOPLE_PORTS,
    ...AUDIT_PORTS,
    ...WEBHOOKS_PORTS,
    ...SAFETY_PORTS,
    ...CONVERSIONS_PORTS,
  ]),
];

/** The generation app's OpenAPI document (docs/design.md, "Contract"). */
export const GENERATION_API = {
  title: 'shortlink generation API',
  version: '1',
  description:
    'Create and manage short links, keys, members, the settings of your domains and (operators) tenants. Every route needs an `x-api-key` whose scopes allow it, or a person’s session cookie (`POST /api/v1/auth/login`) whose role allows it, with `x-csrf-token` on writes; answers carry the plan’s RateLimit-* headers; errors are application/problem+json with a stable `code`.',
  tags: {
    links: 'Short links: create one or a batch, read, list, edit, delete, export, QR codes',
    keys: 'Your tenant’s API keys and their scopes',
    domains: 'The settings of your domains: redirects, branding, robots, app association files',
    audit: 'Who changed what, when and from where',
    webhooks: 'Signed deliveries of your links’ events to your endpoints (Standard Webhooks)',
    sso: 'Single sign-on with your OpenID Connect provider (owners)',
    admin: 'Operators only: tenants, their plans and domains, moderation (the queue of reported links and feed hits, and its actions)',
    reports: 'Visitors’ reports of links (no account needed)',
    conversions: 'Leads and sales your backend reports, attributed to the click that brought them (docs/analytics.md, "Conversions")',
  },
  sessions: true,
};

export interface GenerationOptions {
  /**
   * With no SHORTLINK_BOOTSTRAP_API_KEY, create the operator tenant on a first run (empty meta
   * database) with a generated key, which the launcher shows once (the embedded profile).
   */
  readonly firstRunKey?: boolean;
  /** Routes the app mounts beside its own (the compatibility APIs, each a feature lib of its own). */
  readonly extensions?: readonly GenerationExtension[];
}

/** Controllers and providers an app mounts beside the contexts (they use the contexts' services as the link API does). */
export interface GenerationExtension {
  readonly controllers?: readonly Type[];
  readonly providers?: readonly Provider[];
}

/**
 * The contexts' exports, visible to every module of the app: a context never imports another, it
 * injects what it needs (a link's tenant, a new tenant's owner invitation) by its domain class.
 */
@Global()
@Module({})
class ContextsModule {}

/**
 * What follows a link change: its audit entry, then its webhook event (docs/design.md, "Audit log",
 * "Webhooks"), for the link API and the compatibility APIs alike.
 */
const LINK_CHANGE_HOOKS_PROVIDER: Provider = {
  provide: LINK_CHANGE_HOOKS,
  inject: [LinkAudit, LinkWebhookEvents],
  useFactory: (audit: LinkAudit, webhooks: LinkWebhookEvents): LinkChangeHooks<AuditContext> => everyHook<AuditContext>(audit, webhooks),
};

/** The link changes of every API, each followed by its events (docs/design.md, "Link events"). */
const LINK_COMMANDS_PROVIDER: Provider = {
  provide: LINK_COMMANDS,
  inject: [LinkService, LINK_CHANGE_HOOKS],
  useFactory: (links: LinkService, hooks: LinkChangeHooks<AuditContext>) => new LinkCommands(links, hooks),
};

/** Who is told of a domain's verification and of its loss: the webhooks (docs/design.md, "Custom domains and TLS"). */
const DOMAIN_OWNERSHIP_EVENTS_PROVIDER: Provider = { provide: DOMAIN_OWNERSHIP_EVENTS, useExisting: DomainWebhookEvents };

/** One module per mounted extension, beside the contexts. */
function extensionModule(extension: GenerationExtension, index: number): DynamicModule {
  @Module({})
  class ExtensionModule {}
  Object.defineProperty(ExtensionModule, 'name', { value: `GenerationExtension${index}` });
  return { module: ExtensionModule, controllers: [...(extension.controllers ?? [])], providers: [...(extension.providers ?? [])] };
}

@Module({})
export class GenerationAppModule {
  /**
   * The generation app: tenants, links, people, audit, webhooks and the console, each a context of
   * its own (docs/design.md, "The house"), and the extensions it mounts.
   */
  static forRoot(config: AppConfig, options: GenerationOptions = {}): DynamicModule {
    // In the order their routes read best in the API's document: links first.
    const contexts = [
      SafetyScreeningModule.forRoot(config),
      LinksModule.forRoot(config),
      TenantsModule.forRoot({ firstRunKey: options.firstRunKey }),
      AuditModule,
      WebhooksModule,
      PeopleModule,
      SafetyModule.forRoot(config),
      ConversionsModule,
    ];
    return {
      module: GenerationAppModule,
      imports: [
        ApiAccessModule,
        {
          module: ContextsModule,
          global: true,
          imports: contexts,
          providers: [LINK_CHANGE_HOOKS_PROVIDER, LINK_COMMANDS_PROVIDER, DOMAIN_OWNERSHIP_EVENTS_PROVIDER],
          exports: [...contexts, LINK_COMMANDS, DOMAIN_OWNERSHIP_EVENTS],
        },
        ConsoleModule,
        ...(options.extensions ?? []).map(extensionModule),
      ],
    };
  }
}
