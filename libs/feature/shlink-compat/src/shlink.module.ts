import { CLICK_STATS_READER } from '@shortlink/clicks-domain';
import { CompatAccess } from '@shortlink/nest-platform';
import { ShlinkKeyGuard, ShlinkProblemFilter } from './shlink-access';
import { ShlinkDocsController } from './shlink-openapi';
import { ShlinkController } from './shlink.controller';
import { ShlinkService } from './shlink.service';

/**
 * Shlink REST v3 under /rest/v3, mounted by the generation app (GenerationOptions.extensions): its
 * controllers and providers join the generation module and use its services.
 */
export const SHLINK_COMPAT = {
  controllers: [ShlinkController, ShlinkDocsController],
  providers: [CompatAccess, ShlinkKeyGuard, ShlinkProblemFilter, ShlinkService],
};

/** The ports the Shlink API adds to the generation app's: the OLAP store as this app reads it (non-critical). */
export const SHLINK_PORTS: readonly symbol[] = [CLICK_STATS_READER];
