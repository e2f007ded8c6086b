import { createHash } from 'crypto';
import { CountedClick } from './aggregation';
import { ClickEvent, ClickSource } from './click-event';

/** How a visit reached the short URL: its QR code, or any other way (docs/design.md, "QR codes"). */
export type VisitSource = ClickSource;

/**
 * One click as the raw visits keep it (docs/analytics.md, "Raw visits"): what the rollups count,
 * one row per click, never the client address. Empty facts are null (no referer, unknown country,
 * no variant; region and city unknown or not looked up: GEO_DATABASE=country).
 */
export interface VisitRow {
  /** Stable id of the visit (decimal, 64 bits), derived from the event id (producer, seq). */
  readonly id: string;
  /** Epoch ms, as counted. */
  readonly time: number;
  /** '' for an orphan visit (a code that does not exist). */
  readonly tenantId: string;
  readonly domain: string;
  readonly code: string;
  readonly linkId: string;
  readonly country: string | null;
  readonly region: string | null;
  readonly city: string | null;
  readonly refererHost: string | null;
  readonly device: string;
  readonly browser: string;
  readonly os: string;
  readonly variant: number | null;
  readonly source: VisitSource;
  readonly bot: boolean;
  /** The visitor id of the event (keyed hash, a new one every UTC day). */
  readonly visitor: number;
  readonly producer: string;
  readonly seq: number;
}

/** Where a visits listing goes on from: the last visit shown (newest first by time, then by id). */
export interface VisitPosition {
  /** Epoch ms. */
  readonly time: number;
  readonly id: string;
}

/** A 64-bit id from the event id: unique in practice, the same on every write of the click. */
export function visitIdOf(event: Pick<ClickEvent, 'producer' | 'seq'>): string {
  return createHash('sha256').update(`${event.producer}\u0000${event.seq}`).digest().readBigUInt64BE(0).toString();
}

/** The raw visit of a counted click. */
export function visitOf(click: CountedClick): VisitRow {
  const e = click.event;
  return {
    id: visitIdOf(e),
    time: e.occurredAt,
    tenantId: e.kind === 'orphan' ? '' : e.tenantId,
    domain: e.domain,
    code: e.code,
    linkId: e.linkId,
    country: e.country,
    region: e.region,
    city: e.city,
    refererHost: e.refererHost,
    device: click.facts.device,
    browser: click.facts.browser,
    os: click.facts.os,
    variant: e.variant,
    source: e.source,
    bot: click.facts.bot,
    visitor: e.visitor,
    producer: e.producer,
    seq: e.seq,
  };
}
