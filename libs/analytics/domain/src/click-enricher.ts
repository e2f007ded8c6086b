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
 * under the day's salt (per tenant), referer host. Each distinct address, visitor and referer of a batch is
 * looked up once: bursts repeat them, and the work stays off the requests either way.
 */
export class ClickEnricher {
  constructor(
    /** Names this redirect process in event ids (random per process). */
    readonly producer: string,
    private readonly geo: GeoLocator,
    private readonly visitors: VisitorIds,
  ) {}

  enrich(raws: readonly RawClick[]): ClickEvent[] {
    const places = new Map<string, GeoPlace>();
    const visitorIds = new Map<string, number>();
    const hosts = new Map<string, string | null>();
    const out = new Array<ClickEvent>(raws.length);
    for (let i = 0; i < raws.length; i++) {
      const r = raws[i];
      let place = places.get(r.address);
      if (place === undefined) places.set(r.address, (place = this.geo.placeOf(r.address)));
      const userAgent = r.userAgent.length > MAX_USER_AGENT ? r.userAgent.slice(0, MAX_USER_AGENT) : r.userAgent;
      const visitorKey = `${Math.floor(r.at / DAY_MS)}\u0000${r.tenantId}\u0000${r.address}\u0000${userAgent}`;
      let visitor = visitorIds.get(visitorKey);
      if (visitor === undefined) visitorIds.set(visitorKey, (visitor = this.visitors.idOf(r.tenantId, r.address, userAgent, r.at)));
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
