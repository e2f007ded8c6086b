/**
 * Country of a client address from an offline IP database (docs/design.md, "Visitors"): used by
 * the redirect for geo targeting and for the country of a click. Lookups are synchronous and in
 * memory: they run on the redirect's hot path.
 */
export interface GeoLookup {
  /** ISO 3166-1 alpha-2 code in upper case, or null when the address is private, reserved or unknown. */
  countryOf(address: string): string | null;
  /** When the database was built, for operators (a stale database mislocates clients). */
  readonly builtAt: Date | null;
}

/** Where a client address is, as far as the database knows: each part null when unknown. */
export interface GeoPlace {
  readonly country: string | null;
  /** The first-level subdivision (a state, a province), in the database's spelling. */
  readonly region: string | null;
  readonly city: string | null;
}

/**
 * A GeoLookup that also names region and city, for the click of a redirect (docs/design.md,
 * "Visitors"): asked in the redirect's flusher, off the response path. With a country database
 * region and city are always null.
 */
export interface GeoLocator extends GeoLookup {
  placeOf(address: string): GeoPlace;
  /** Whether the database has cities at all ('city') or countries only. */
  readonly detail: 'country' | 'city';
}

/** The lookup (a GeoLocator) of client addresses. */
export const GEO_LOOKUP = Symbol('GEO_LOOKUP');

/** ISO 3166-1 alpha-2 as it appears in targeting rules and breakdowns. */
export const COUNTRY_CODE = /^[A-Z]{2}$/;
