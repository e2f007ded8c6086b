import type { ClickAggregateStore } from '@shortlink/clicks-domain';
import { CLICK_STATS_READER } from '@shortlink/clicks-domain';
import { CODE_SECRET } from '@shortlink/links-domain';
import { CompatAccess } from '@shortlink/nest-platform';
import { TENANT_STORE, TenantStore } from '@shortlink/tenants-domain';
import type { Provider, Type } from '@nestjs/common';
import { KeyDirectory } from './key-directory';
import { LinkClicks } from './link-clicks';
import { YOURLS_CLICKS, YOURLS_KEYS, YOURLS_SIGNATURES, YourlsController } from './yourls.controller';
import { YourlsOpenApiController } from './yourls.openapi';
import { YourlsSignatureController } from './yourls-signature.controller';
import { YourlsSignatures } from './yourls-signatures';

/** The ports the YOURLS API asks of the app besides the generation module's: the click counts. */
export const YOURLS_PORTS: readonly symbol[] = [CLICK_STATS_READER];

export interface YourlsOptions {
  /** The click store to count with (the embedded launcher's shared one); default: CLICK_STATS_READER, when bound. */
  readonly clicks?: ClickAggregateStore | null;
}

/** The YOURLS API's controllers and providers, mounted into the generation module (GenerationOptions.extensions). */
export function yourlsCompat(options: YourlsOptions = {}): { controllers: Type[]; providers: Provider[] } {
  return {
    controllers: [YourlsController, YourlsSignatureController, YourlsOpenApiController],
    providers: [
      CompatAccess,
      { provide: YOURLS_SIGNATURES, inject: [CODE_SECRET], useFactory: (secret: string) => new YourlsSignatures(secret) },
      { provide: YOURLS_KEYS, inject: [TENANT_STORE], useFactory: (store: TenantStore) => new KeyDirectory(store) },
      options.clicks !== undefined
        ? { provide: YOURLS_CLICKS, useValue: new LinkClicks(options.clicks) }
        : {
            provide: YOURLS_CLICKS,
            inject: [{ token: CLICK_STATS_READER, optional: true }],
            useFactory: (store: ClickAggregateStore | null | undefined) => new LinkClicks(store ?? null),
          },
    ],
  };
}
