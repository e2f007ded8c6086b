import { randomUUID } from 'crypto';
import { PlatformEvent, WebhookEventType } from './webhook';
import { PlatformEventSink } from './ports';

export interface EventPublisherOptions {
  /** Pause before a send the bus refused is tried again (1 s). */
  readonly retryMs?: number;
  /** Events kept in memory while the bus is down; beyond, the oldest are dropped (and counted). */
  readonly maxPending?: number;
  /** Events per send. */
  readonly batchSize?: number;
  readonly onDropped?: (count: number) => void;
  readonly onDeferred?: (error: unknown, pending: number) => void;
}

/**
 * Publishes the platform's events after the change they tell of was acknowledged (docs/design.md,
 * "Webhooks"). The request does not wait for the bus: events are queued in memory and sent in
 * order by one background loop, tried again every `retryMs` while the bus refuses them (the
 * deliverer's delivery ids are derived from the event id, so a resent event is delivered once per
 * endpoint). What is still queued when the process dies is lost, as the docs say.
 */
export class EventPublisher {
  private pending: PlatformEvent[] = [];
  private sending: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly sink: PlatformEventSink,
    private readonly options: EventPublisherOptions = {},
  ) {}

  event(type: WebhookEventType, tenantId: string, data: Record<string, unknown>, at = Date.now()): PlatformEvent {
    return { id: `evt_${randomUUID().replace(/-/g, '')}`, type, tenantId, at, data };
  }

  /** Queues the events; never throws, never waits for the bus. */
  publish(events: readonly PlatformEvent[]): void {
    if (!events.length) return;
    this.pending.push(...events);
    const max = this.options.maxPending ?? 10_000;
    if (this.pending.length > max) this.options.onDropped?.(this.pending.splice(0, this.pending.length - max).length);
    this.flush();
  }

  get pendingCount(): number {
    return this.pending.length;
  }

  /** Settles when the queue is empty or the bus refused (then a retry is scheduled). */
  idle(): Promise<void> {
    return this.sending ?? Promise.resolve();
  }

  /** At shutdown: one last try for what is queued, then what is left is dropped (and counted). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.sending;
    if (this.pending.length) await this.sendAll().catch(() => undefined);
    if (this.pending.length) this.options.onDropped?.(this.pending.length);
    this.pending = [];
  }

  private flush(): void {
    if (this.sending || this.timer || this.stopped) return;
    this.sending = this.sendAll()
      .catch((error: unknown) => {
        this.options.onDeferred?.(error, this.pending.length);
        if (this.stopped) return;
        this.timer = setTimeout(() => {
          this.timer = null;
          this.flush();
        }, this.options.retryMs ?? 1000);
        this.timer.unref?.();
      })
      .finally(() => {
        this.sending = null;
        if (this.pending.length && !this.timer) this.flush();
      });
  }

  private async sendAll(): Promise<void> {
    while (this.pending.length) {
      const batch = this.pending.slice(0, this.options.batchSize ?? 500);
      await this.sink.publish(batch);
      // Only what was sent leaves the queue (more may have been queued meanwhile).
      this.pending.splice(0, batch.length);
    }
  }
}
