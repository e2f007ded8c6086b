import type { Provider, Type } from '@nestjs/common';
import { CLICK_STATS_READER, type ClickAggregateStore } from '@shortlink/clicks-domain';
import { CompatAccess } from '@shortlink/nest-platform';
import { BITLY_CLICKS, BitlyController } from './bitly.controller';
import { BitlyOpenApiController } from './bitly.openapi';

/** The ports the Bitly API asks of the app besides the generation module's: the click counts. */
export const BITLY_PORTS: readonly symbol[] = [CLICK_STATS_READER];

export interface BitlyOptions {
  /** The click store to count with (the embedded launcher's shared one); default: CLICK_STATS_READER, when bound. */
  readonly clicks?: ClickAggregateStore | null;
}

/** The Bitly v4 subset's controllers and providers, mounted into the generation module (GenerationOptions.extensions). */
export function bitlyCompat(options: BitlyOptions = {}): { controllers: Type[]; providers: Provider[] } {
  return {
    controllers: [BitlyController, BitlyOpenApiController],
    providers: [
      CompatAccess,
      options.clicks !== undefined
        ? { provide: BITLY_CLICKS, useValue: options.clicks }
        : {
            provide: BITLY_CLICKS,
            inject: [{ token: CLICK_STATS_READER, optional: true }],
            useFactory: (store: ClickAggregateStore | undefined) => store ?? null,
          },
    ],
  };
}
