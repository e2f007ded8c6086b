import { DomainError, ErrorCode } from '@shortlink/core';

/**
 * A lead or a sale as it travels from the generation app to analytics (docs/analytics.md,
 * "Conversions"), on its own topic. `key` is what makes it count once: a lead's is its customer (one
 * lead per customer), a sale's its invoice id, else its event id. Counted by key, so a replay, a
 * producer's resend or a retried call that slipped through counts nothing more.
 */
export interface ConversionEvent {
  readonly kind: 'lead' | 'sale';
  /** `cnv_<32 hex>`, unique per event. */
  readonly id: string;
  readonly key: string;
  readonly tenantId: string;
  /** Epoch ms at the API. */
  readonly at: number;
  /** The link the conversion is attributed to: a lead's click's link; a sale's, its customer's lead's (first touch). */
  readonly linkId: string;
  readonly domain: string;
  readonly code: string;
  readonly customerId: string;
  readonly eventName: string;
  /** The click id of the lead (a sale: its customer's lead's). */
  readonly clickId: string;
  /**
   * Epoch ms of the minute of that click (what the click id says): where the consumer finds the
   * click's visit to copy its dimensions (docs/design.md, "Conversions"). Absent in events sent
   * before it existed.
   */
  readonly clickAt?: number;
  /** A sale's amount in the currency's minor unit (negative: a refund); 0 for a lead. */
  readonly amount: number;
  /** ISO 4217, upper case; '' for a lead. */
  readonly currency: string;
  readonly invoiceId: string | null;
  /** The tenant's own JSON object, at most the configured size; null for none. */
  readonly metadata: Readonly<Record<string, unknown>> | null;
}

/**
 * The dimensions of the click a conversion is attributed to, as the clicks' raw visits keep them
 * ('' where unknown): copied onto the lead or sale row when the consumer writes it, so conversions
 * break down by the same dimensions as clicks (docs/analytics.md, "Conversions").
 */
export interface ConversionDimensions {
  readonly country: string;
  readonly region: string;
  readonly city: string;
  readonly referer: string;
  readonly device: string;
  readonly browser: string;
  readonly os: string;
  /** The A/B variant index as text; '' none. */
  readonly variant: string;
  /** `qr` or `link`; '' unknown. */
  readonly source: string;
}

/** Dimensions of a conversion whose click could not be found (its visit gone, or never stored). */
export const UNKNOWN_DIMENSIONS: ConversionDimensions = Object.freeze({
  country: '',
  region: '',
  city: '',
  referer: '',
  device: '',
  browser: '',
  os: '',
  variant: '',
  source: '',
});

/** A click a conversion names: where the consumer looks for its dimensions. */
export interface ConvertedClick {
  readonly tenantId: string;
  readonly domain: string;
  readonly code: string;
  readonly clickId: string;
  /** Epoch ms of the click's minute, when known. */
  readonly clickAt?: number;
}

/** What a lead reports (`POST /api/v1/track/lead`). */
export interface LeadInput {
  readonly clickId: string;
  readonly eventName: string;
  readonly customerId: string;
  readonly metadata: Readonly<Record<string, unknown>> | null;
}

/** What a sale reports (`POST /api/v1/track/sale`). */
export interface SaleInput {
  readonly customerId: string;
  readonly amount: number;
  readonly currency: string;
  readonly eventName: string;
  readonly invoiceId: string | null;
  readonly metadata: Readonly<Record<string, unknown>> | null;
}

export const CONVERSION_LIMITS = {
  customerId: 100,
  eventName: 100,
  invoiceId: 100,
  /** |amount| in minor units: below 2^53, far above any real payment (10^13 cents = 10^11 units). */
  amount: 10_000_000_000_000,
} as const;

/**
 * ISO 4217 codes in use (the active list, funds codes and precious metals aside): a sale in any other
 * three letters is refused, so that revenue is never split over a typo (`EUO`).
 */
const CURRENCIES = new Set(
  (
    'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK ' +
    'DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF ' +
    'KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK ' +
    'PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX ' +
    'USD UYU UZS VED VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG'
  ).split(' '),
);

const invalid = (field: string, why: string) => new DomainError(ErrorCode.VALIDATION_FAILED, `${field} ${why}`, { field });
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const PRINTABLE = /^[^\u0000-\u001f\u007f]+$/;

/** A required printable string of 1 to `max` characters (trimmed). */
function text(value: unknown, field: string, max: number): string {
  if (typeof value !== 'string' || value.trim() === '' || value.trim().length > max || !PRINTABLE.test(value))
    throw invalid(field, `must be 1 to ${max} printable characters`);
  return value.trim();
}

/** `metadata`: a JSON object of at most `maxBytes` bytes once serialised; null for none. */
export function checkMetadata(value: unknown, maxBytes: number): Record<string, unknown> | null {
  if (value === undefined || value === null) return null;
  if (!isObject(value)) throw invalid('metadata', 'must be a JSON object');
  if (Buffer.byteLength(JSON.stringify(value)) > maxBytes) throw invalid('metadata', `must be at most ${maxBytes} bytes of JSON`);
  return value;
}

export function checkLead(body: unknown, maxMetadataBytes: number): LeadInput {
  if (!isObject(body)) throw invalid('body', 'must be a JSON object');
  if (typeof body.clickId !== 'string' || body.clickId === '') throw invalid('clickId', 'is required');
  return {
    clickId: body.clickId,
    eventName: text(body.eventName, 'eventName', CONVERSION_LIMITS.eventName),
    customerId: text(body.customerId, 'customerId', CONVERSION_LIMITS.customerId),
    metadata: checkMetadata(body.metadata, maxMetadataBytes),
  };
}

export function checkSale(body: unknown, maxMetadataBytes: number): SaleInput {
  if (!isObject(body)) throw invalid('body', 'must be a JSON object');
  const customerId = text(body.customerId, 'customerId', CONVERSION_LIMITS.customerId);
  const amount = body.amount;
  if (typeof amount !== 'number' || !Number.isInteger(amount) || Math.abs(amount) > CONVERSION_LIMITS.amount)
    throw invalid('amount', `must be an integer in the currency's minor unit (cents), at most ${CONVERSION_LIMITS.amount} either way; negative: a refund`);
  const currency = typeof body.currency === 'string' ? body.currency.toUpperCase() : '';
  if (!CURRENCIES.has(currency)) throw invalid('currency', 'must be an ISO 4217 currency code, e.g. "EUR"');
  const invoiceId = body.invoiceId === undefined || body.invoiceId === null ? null : text(body.invoiceId, 'invoiceId', CONVERSION_LIMITS.invoiceId);
  return {
    customerId,
    amount,
    currency,
    eventName: text(body.eventName, 'eventName', CONVERSION_LIMITS.eventName),
    invoiceId,
    metadata: checkMetadata(body.metadata, maxMetadataBytes),
  };
}
