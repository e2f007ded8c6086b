/** One redirect, as the redirect app emits it (event `UrlVisited` carrying ids and request facts). */
export interface ClickEvent {
  /** Unique per click (UUID); lets consumers recognise a replayed message. */
  readonly eventId: string;
  /** Epoch milliseconds at the redirect. */
  readonly occurredAt: number;
  readonly linkId: string;
  readonly tenantId: string;
  readonly domain: string;
  readonly code: string;
  /** Visitor IP as seen by the redirect; analytics stores only a keyed hash of it. */
  readonly ip: string;
  readonly userAgent: string;
  readonly referer: string | null;
}

/** A click event as delivered by the bus: its partition and offset give replay-safe progress. */
export interface DeliveredClick {
  readonly partition: number;
  /** Offset within the partition, as a decimal string (Kafka offsets are int64). */
  readonly offset: string;
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
}

export function isClickEvent(value: unknown): value is ClickEvent {
  const v = value as Record<string, unknown>;
  return (
    typeof v === 'object' && v !== null &&
    typeof v.eventId === 'string' && typeof v.occurredAt === 'number' && Number.isFinite(v.occurredAt) &&
    typeof v.linkId === 'string' && typeof v.tenantId === 'string' && typeof v.domain === 'string' &&
    typeof v.code === 'string' && typeof v.ip === 'string' && typeof v.userAgent === 'string' &&
    (v.referer === null || typeof v.referer === 'string')
  );
}
