import { GEO_LOOKUP } from '@shortlink/visitors-domain';
import { MmdbGeoLookup } from '@shortlink/geo';
import { itself, portSpec } from '../port';

/** Countries of client addresses: an MMDB file (GEO_DATABASE), the bundled DB-IP one by default. */
export const geoPort = portSpec({
  name: 'geo',
  open: (config) => new MmdbGeoLookup(config.geo.databaseFile ?? undefined),
  provides: [[GEO_LOOKUP, itself]],
});
