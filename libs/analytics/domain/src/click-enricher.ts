import { GeoLocator, GeoPlace, VisitorIds } from '@shortlink/visitors-domain';
import { ClickEvent, ClickKind, ClickSource } from './click-event';

/**
 * What the redirect's response path records of a click: plain facts copied from the request, no
 * lookup, no hashing (docs/analytics.md, "Events"). It waits in the redirect's bounded buffer; the
 * flusher enriches it into a ClickEvent. The raw address never leaves the process.
 */
export interface RawClick {
  readonly seq: number;
  readonly kind: ClickKind;
  /** Epoch ms. */
  readonly at: number;
  readonly tenantId: string;
  readonly linkId: string;
  readonly domain: string;
  readonly code: string;
  readonly address: string;
  readonly userAgent: string;
  readonly referer: string | null;
  readonly variant: number | null;
  /** `qr` when the request came by the URL of the link's QR code. */
  readonly source: ClickSource;
  /** The click id passed to the target (a link with conversion tracking); absent otherwise. */
  readonly clickId?: string;
}

/** Longest user agent carried on the bus; longer ones are cut (the classifier reads 512 characters too). */
export const MAX_USER_AGENT = 512;
/** Longest referer host kept (a DNS name is at most 253 characters). */
const MAX_HOST = 253;
const DAY_MS = 86_400_000;

/**
 * Turns raw clicks into events in the flusher: country (and region and city with a city database)
 * from the offline IP database, visitor id
 * under the day's salt (per tenant), referer host. Each distinct address and referer of a batch is
 * looked up once, each visitor once a day (while the kept ids are fewer than `maxVisitors`): bursts and
 * returning visitors repeat them, and the work stays off the requests either way.
 */
export class ClickEnricher {
  /**
   * Visitor ids of this day by tenant, address and user agent, kept across batches (a visitor comes
   * back: one HMAC per visitor and day, not per batch), in nested maps so that no key is built per
   * click. Emptied when the day turns or when it holds `maxVisitors`.
   */
  private readonly visitorIds = new Map<string, Map<string, Map<string, number>>>();
  private visitorDay = -1;
  private visitorCount = 0;

  constructor(
    /** Names this redirect process in event ids (random per process). */
    readonly producer: string,
    private readonly geo: GeoLocator,
    private readonly visitors: VisitorIds,
    /** Visitors whose id is kept at most (under 1 KB each with a browser's agent: a few MB). */
    private readonly maxVisitors = 10_000,
  ) {}

  enrich(raws: readonly RawClick[]): ClickEvent[] {
    const places = new Map<string, GeoPlace>();
    const hosts = new Map<string, string | null>();
    const out = new Array<ClickEvent>(raws.length);
    // A burst repeats its visitor: the previous click's answer is reused without a lookup.
    let last: RawClick | null = null;
    let lastPlace: GeoPlace | undefined;
    let lastVisitor = 0;
    let lastUserAgent = '';
    for (let i = 0; i < raws.length; i++) {
      const r = raws[i];
      const day = Math.floor(r.at / DAY_MS);
      let place: GeoPlace | undefined;
      let visitor: number;
      let userAgent: string;
      if (last !== null && r.address === last.address && r.userAgent === last.userAgent && r.tenantId === last.tenantId && day === this.visitorDay) {
        place = lastPlace!;
        visitor = lastVisitor;
        userAgent = lastUserAgent;
      } else {
        place = places.get(r.address);
        if (place === undefined) places.set(r.address, (place = this.geo.placeOf(r.address)));
        userAgent = r.userAgent.length > MAX_USER_AGENT ? r.userAgent.slice(0, MAX_USER_AGENT) : r.userAgent;
        visitor = this.visitorOf(day, r.tenantId, r.address, userAgent, r.at);
        last = r;
        lastPlace = place;
        lastVisitor = visitor;
        lastUserAgent = userAgent;
      }
      let refererHost: string | null = null;
      if (r.referer) {
        const cached = hosts.get(r.referer);
        if (cached === undefined) hosts.set(r.referer, (refererHost = hostOf(r.referer)));
        else refererHost = cached;
      }
      const event: ClickEvent = {
        producer: this.producer,
        seq: r.seq,
        kind: r.kind,
        occurredAt: r.at,
        tenantId: r.tenantId,
        linkId: r.linkId,
        domain: r.domain,
        code: r.code,
        visitor,
        country: place.country,
        region: place.region,
        city: place.city,
        source: r.source,
        refererHost,
        userAgent,
        variant: r.variant,
      };
      out[i] = r.clickId === undefined ? event : { ...event, clickId: r.clickId };
    }
    return out;
  }

  /** The visitor id of the day `day` (the salt's), from the maps or computed once. */
  private visitorOf(day: number, tenantId: string, address: string, userAgent: string, at: number): number {
    if (day !== this.visitorDay || this.visitorCount >= this.maxVisitors) {
      // A new day has a new salt (and a click of the day before, late in a batch, its own): start over.
      this.visitorIds.clear();
      this.visitorCount = 0;
      this.visitorDay = day;
    }
    let byAddress = this.visitorIds.get(tenantId);
    if (byAddress === undefined) this.visitorIds.set(tenantId, (byAddress = new Map()));
    let byAgent = byAddress.get(address);
    if (byAgent === undefined) byAddress.set(address, (byAgent = new Map()));
    let id = byAgent.get(userAgent);
    if (id === undefined) {
      byAgent.set(userAgent, (id = this.visitors.idOf(tenantId, address, userAgent, at)));
      this.visitorCount++;
    }
    return id;
  }
}

/** The host of a Referer value in lower case without `www.`; null when it has none. */
export function hostOf(referer: string): string | null {
  let host: string;
  try {
    host = new URL(referer).hostname.toLowerCase();
  } catch {
    return null;
  }
  if (host.startsWith('www.')) host = host.slice(4);
  if (host === '' || host.length > MAX_HOST) return null;
  return host;
}
