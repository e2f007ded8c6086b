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

export const GEO_LOOKUP = Symbol('GEO_LOOKUP');

/** ISO 3166-1 alpha-2 as it appears in targeting rules and breakdowns. */
export const COUNTRY_CODE = /^[A-Z]{2}$/;
