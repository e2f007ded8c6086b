import { randomUUID } from 'crypto';
import { PlatformEvent, WebhookEventType } from './webhook';
import { PlatformEventSink } from './ports';

export interface EventPublisherOptions {
  /** How long a request waits for the bus before leaving its events to the retries (1 s). */
  readonly waitMs?: number;
  readonly retryMs?: number;
  /** Events kept in memory while the bus is down; beyond, the oldest are dropped (and counted). */
  readonly maxPending?: number;
  readonly onDropped?: (count: number) => void;
  readonly onDeferred?: (error: unknown, pending: number) => void;
}

/**
 * Publishes the platform's events after the change they tell of was acknowledged (docs/design.md,
 * "Webhooks"), never failing the request that made it: events the bus does not take within
 * `waitMs` wait in memory and are sent again every `retryMs` (the deliverer's delivery ids are
 * derived from the event id, so a resent event is delivered once per endpoint).
 */
export class EventPublisher {
  private pending: PlatformEvent[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly sink: PlatformEventSink,
    private readonly options: EventPublisherOptions = {},
  ) {}

  event(type: WebhookEventType, tenantId: string, data: Record<string, unknown>, at = Date.now()): PlatformEvent {
    return { id: `evt_${randomUUID().replace(/-/g, '')}`, type, tenantId, at, data };
  }

  async publish(events: readonly PlatformEvent[]): Promise<void> {
    if (!events.length) return;
    try {
      await withDeadline(this.sink.publish(events), this.options.waitMs ?? 1000);
    } catch (error) {
      this.defer(events, error);
    }
  }

  get pendingCount(): number {
    return this.pending.length;
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending.length) await this.retry();
    if (this.pending.length) this.options.onDropped?.(this.pending.length);
    this.pending = [];
  }

  private defer(events: readonly PlatformEvent[], error: unknown): void {
    this.pending.push(...events);
    const max = this.options.maxPending ?? 10_000;
    if (this.pending.length > max) this.options.onDropped?.(this.pending.splice(0, this.pending.length - max).length);
    this.options.onDeferred?.(error, this.pending.length);
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.retry();
      }, this.options.retryMs ?? 1000);
      this.timer.unref?.();
    }
  }

  private async retry(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    try {
      await this.sink.publish(batch);
    } catch (error) {
      this.defer(batch, error);
    }
  }
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the events bus did not answer within ${ms} ms`)), ms)));
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
