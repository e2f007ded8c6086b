import type { ClickColumns } from './click-columns';

/**
 * Version of the click event written on the bus. Readers skip (and count) records of a version
 * they do not know, so a newer producer never crashes an older consumer (docs/analytics.md); a
 * reader of version 3 (source, region, city) still reads version 2, whose clicks came by `link`
 * with no region or city.
 */
export const CLICK_EVENT_VERSION = 4;

/** A redirect of a known link, or a request for a code that does not exist (a scanner, a typo). */
export type ClickKind = 'click' | 'orphan';

/**
 * How the visitor reached the short URL: `qr`, by the URL its QR code encodes (`/{code}/~`,
 * docs/design.md, "QR codes"); `link`, by any other (typed, clicked, shared).
 */
export type ClickSource = 'qr' | 'link';

/**
 * One redirect as it leaves the redirect app (docs/analytics.md, "Events"), enriched there off the
 * response path: the raw client address never leaves the redirect, only the country and the
 * visitor id derived from it. The user agent travels as it is; the consumer classifies it
 * (device, browser, OS, bot) once per distinct agent, where it costs least.
 */
export interface ClickEvent {
  /**
   * Event id = (producer, seq): `producer` names one redirect process, `seq` counts its clicks
   * from 0. A producer's events reach each partition in seq order, so a consumer recognises a
   * resend by seq <= the highest seq it counted of that producer on that partition.
   */
  readonly producer: string;
  readonly seq: number;
  readonly kind: ClickKind;
  /** Epoch milliseconds at the redirect. */
  readonly occurredAt: number;
  /** '' for an orphan visit: no link, no tenant. */
  readonly tenantId: string;
  readonly linkId: string;
  readonly domain: string;
  readonly code: string;
  /** Keyed hash of client address + user agent under a salt that changes every UTC day (< 2^52). */
  readonly visitor: number;
  /** ISO 3166-1 alpha-2, null when unknown (private address, not in the database). */
  readonly country: string | null;
  /** First-level subdivision and city, in the IP database's spelling; null when unknown or with a country database. */
  readonly region: string | null;
  readonly city: string | null;
  readonly source: ClickSource;
  /** Host of the Referer header (lower case), null for none or an unparsable one. */
  readonly refererHost: string | null;
  readonly userAgent: string;
  /** The A/B variant served, when the link has variants. */
  readonly variant: number | null;
  /**
   * The click id the redirect gave this click, on a link with conversion tracking (version 4,
   * docs/analytics.md "Conversions"); absent otherwise.
   */
  readonly clickId?: string;
}

/** `<producer>-<seq in base 36>`: how logs and tests name an event. */
export const eventIdOf = (e: Pick<ClickEvent, 'producer' | 'seq'>): string => `${e.producer}-${e.seq.toString(36)}`;

/** A click event as delivered by the bus: its partition and offset give replay-safe progress. */
export interface DeliveredClick {
  readonly partition: number;
  /**
   * Offset of the record that carried the event, as a decimal string (Kafka offsets are int64).
   * One record carries several events; they share its offset.
   */
  readonly offset: string;
  /**
   * When the record entered the log, epoch ms (Kafka's record timestamp; the in-process log's append
   * time). Stored with the record, so a batch read again carries the same: the consumer's time
   * decisions (late, clock ahead) are taken against it, never against its own clock (docs/analytics.md,
   * "Exactly once").
   */
  readonly recordedAt: number;
  readonly event: ClickEvent;
}

export interface ClickBatch {
  /**
   * The log the batch was read from: a Kafka topic (`kafka:<topic>`) or one incarnation of the
   * in-process log (`memory:<uuid>`). Offsets mean something only within one source: a new
   * in-process log starts again at 0, so progress is kept per source (docs/design.md).
   */
  readonly source: string;
  readonly partition: number;
  readonly messages: readonly DeliveredClick[];
  /**
   * The same clicks column by column, when the source decoded them so (both sources do): the
   * analytics consumer reads these and makes no object per click (docs/design.md, "Clicks and analytics").
   */
  readonly clicks?: ClickColumns;
}
