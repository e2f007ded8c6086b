import { randomBytes } from 'crypto';
import type { IncomingMessage } from 'http';
import {
  BatchSink,
  ClickBuffer,
  ClickBufferObserver,
  ClickBufferOptions,
  ClickEnricher,
  ClickEventSink,
  ClickSource,
  RawClick,
} from '@shortlink/clicks-domain';
import { CachedLink, ShortUrlIdentifier } from '@shortlink/links-domain';
import { GeoLocator, VisitorIds } from '@shortlink/visitors-domain';

/** What the recorder hands clicks to and enriches them with. */
export interface ClickRecorderParts {
  readonly sink: ClickEventSink;
  readonly geo: GeoLocator;
  /** The secret each day's salt of the visitor ids is derived from (VisitorIds). */
  readonly visitorSecret: string;
  readonly observer?: ClickBufferObserver;
}

/**
 * Everything the redirect does for analytics (docs/analytics.md, "Events"). On the response path
 * `record` only copies request facts into the bounded buffer (synchronous, O(1), no lookup, no
 * hash); the buffer's flusher enriches them (country, visitor id under the day's salt, referer
 * host) and hands them to the bus. Raw addresses never leave this process.
 */
export class ClickRecorder {
  /** Names this process in event ids: a producer's events are numbered from 0 (docs/analytics.md, "Exactly once"). */
  readonly producer = randomBytes(8).toString('hex');
  private seq = 0;
  readonly buffer: ClickBuffer<RawClick>;

  constructor({ sink, geo, visitorSecret, observer }: ClickRecorderParts, options: ClickBufferOptions) {
    const enricher = new ClickEnricher(this.producer, geo, new VisitorIds(visitorSecret));
    const enriching: BatchSink<RawClick> = { send: (raws) => sink.send(enricher.enrich(raws)) };
    this.buffer = new ClickBuffer<RawClick>(enriching, options, observer);
  }

  /**
   * A redirect of `link` (reached as `id`); `variant` is the A/B variant served, when the link has
   * variants; `source`: `qr` when reached by the URL of its QR code (docs/design.md, "QR codes");
   * `clickId`: the id passed to the target, on a link with conversion tracking.
   */
  record(
    req: IncomingMessage,
    link: CachedLink,
    clientAddress: string,
    variant: number | null,
    id: ShortUrlIdentifier,
    source: ClickSource,
    clickId?: string,
  ): void {
    const raw: RawClick = {
      seq: this.seq++,
      kind: 'click',
      at: Date.now(),
      tenantId: link.tenantId,
      linkId: link.id,
      domain: id.domain,
      code: id.code,
      address: clientAddress,
      userAgent: req.headers['user-agent'] ?? '',
      referer: req.headers.referer ?? null,
      variant,
      source,
    };
    this.buffer.push(clickId === undefined ? raw : { ...raw, clickId });
  }

  /** A request for a code that does not exist (an orphan visit: scanners, typos, deleted links). */
  recordOrphan(req: IncomingMessage, id: ShortUrlIdentifier, clientAddress: string, source: ClickSource): void {
    this.buffer.push({
      seq: this.seq++,
      kind: 'orphan',
      at: Date.now(),
      tenantId: '',
      linkId: '',
      domain: id.domain,
      code: id.code,
      address: clientAddress,
      userAgent: req.headers['user-agent'] ?? '',
      referer: req.headers.referer ?? null,
      variant: null,
      source,
    });
  }
}
