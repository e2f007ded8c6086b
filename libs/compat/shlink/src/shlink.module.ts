import type { Provider, Type } from '@nestjs/common';
import { CLICK_STATS_READER, ClickAggregateStore, ClickEventSource, MERCURE_CLICK_SOURCE } from '@shortlink/clicks-domain';
import { CODE_SECRET } from '@shortlink/links-domain';
import { APP_LOGGER, PinoNestLogger } from '@shortlink/nest-platform';
import { MercureController } from './mercure/mercure.controller';
import { MercureHub } from './mercure/mercure-hub';
import { MercureTokens } from './mercure/mercure-token';
import { CompatAccess } from '@shortlink/nest-platform';
import { ShlinkKeyGuard, ShlinkProblemFilter } from './shlink-access';
import { ShlinkDocsController } from './shlink-openapi';
import { ShlinkController } from './shlink.controller';
import { SHLINK_VISITS, ShlinkService } from './shlink.service';

/** The ports the Shlink API adds to the generation app's: the OLAP store as this app reads it (non-critical), the click stream of its Mercure hub. */
export const SHLINK_PORTS: readonly symbol[] = [CLICK_STATS_READER, MERCURE_CLICK_SOURCE];

/** Open Mercure subscriptions per tenant and generation instance (a browser tab of Shlink's UI opens one per screen's topic). */
const MERCURE_MAX_PER_TENANT = 50;

export interface ShlinkOptions {
  /** The store of raw visits and click counts (the embedded launcher's shared one); default: CLICK_STATS_READER, when bound. */
  readonly visits?: ClickAggregateStore | null;
  /** The click stream of the Mercure hub (the embedded launcher's shared port); default: MERCURE_CLICK_SOURCE, when bound. */
  readonly clicks?: ClickEventSource | null;
}

/**
 * Shlink REST v3 under /rest/v3 and its document at /docs/shlink/openapi.json, mounted into the
 * generation module (GenerationOptions.extensions): the routes use its services as the link API does.
 */
export function shlinkCompat(options: ShlinkOptions = {}): { controllers: Type[]; providers: Provider[] } {
  return {
    controllers: [ShlinkController, ShlinkDocsController, MercureController],
    providers: [
      CompatAccess,
      ShlinkKeyGuard,
      ShlinkProblemFilter,
      ShlinkService,
      { provide: MercureTokens, inject: [CODE_SECRET], useFactory: (secret: string) => new MercureTokens(secret) },
      {
        provide: MercureHub,
        inject: [ShlinkService, APP_LOGGER, { token: MERCURE_CLICK_SOURCE, optional: true }],
        useFactory: (shlink: ShlinkService, logger: PinoNestLogger, bound: ClickEventSource | null | undefined) => {
          const log = logger.scoped('MercureHub');
          return new MercureHub(
            options.clicks !== undefined ? options.clicks : (bound ?? null),
            { visit: (row, orphan) => shlink.visitView(row, orphan), shortUrls: (tenantId, links) => shlink.mercureShortUrls(tenantId, links) },
            { maxPerTenant: MERCURE_MAX_PER_TENANT, onError: (message) => log.warn(message) },
          );
        },
      },
      options.visits !== undefined
        ? { provide: SHLINK_VISITS, useValue: options.visits }
        : {
            provide: SHLINK_VISITS,
            inject: [{ token: CLICK_STATS_READER, optional: true }],
            useFactory: (store: ClickAggregateStore | null | undefined) => store ?? null,
          },
    ],
  };
}
