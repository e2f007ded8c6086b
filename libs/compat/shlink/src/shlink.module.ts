import type { Provider, Type } from '@nestjs/common';
import { CLICK_STATS_READER, ClickAggregateStore } from '@shortlink/clicks-domain';
import { CompatAccess } from '@shortlink/nest-platform';
import { ShlinkKeyGuard, ShlinkProblemFilter } from './shlink-access';
import { ShlinkDocsController } from './shlink-openapi';
import { ShlinkController } from './shlink.controller';
import { SHLINK_VISITS, ShlinkService } from './shlink.service';

/** The ports the Shlink API adds to the generation app's: the OLAP store as this app reads it (non-critical). */
export const SHLINK_PORTS: readonly symbol[] = [CLICK_STATS_READER];

export interface ShlinkOptions {
  /** The store of raw visits and click counts (the embedded launcher's shared one); default: CLICK_STATS_READER, when bound. */
  readonly visits?: ClickAggregateStore | null;
}

/**
 * Shlink REST v3 under /rest/v3 and its document at /docs/shlink/openapi.json, mounted into the
 * generation module (GenerationOptions.extensions): the routes use its services as the link API does.
 */
export function shlinkCompat(options: ShlinkOptions = {}): { controllers: Type[]; providers: Provider[] } {
  return {
    controllers: [ShlinkController, ShlinkDocsController],
    providers: [
      CompatAccess,
      ShlinkKeyGuard,
      ShlinkProblemFilter,
      ShlinkService,
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
