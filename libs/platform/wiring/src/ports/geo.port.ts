import { GEO_LOOKUP } from '@shortlink/visitors-domain';
import { bundledGeoDatabase, MmdbGeoLookup } from '@shortlink/geo';
import { itself, portSpec } from '../port';

/**
 * Countries (and with `GEO_DATABASE=city` regions and cities) of client addresses: the bundled DB-IP
 * country or city database, or the operator's MMDB files. The city database replaces the country
 * one (it has the countries too), so one database is in memory (docs/design.md, "Visitors").
 */
export const geoPort = portSpec({
  name: 'geo',
  open: (config) => {
    const { database } = config.geo;
    return new MmdbGeoLookup(typeof database === 'string' ? bundledGeoDatabase(database) : database.files);
  },
  provides: [[GEO_LOOKUP, itself]],
});
