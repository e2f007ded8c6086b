import type { PlatformEvent, PlatformEventSink, PlatformEventSource } from '@shortlink/webhooks-domain';

/**
 * The embedded twin of the events topic (docs/design.md, "Webhooks"): one in-process queue shared
 * by the apps of the process, one consumer. Events wait (up to `maxPending`, 10 000, oldest dropped) until
 * the consumer's handler resolved for them; a handler that throws gets them again after `retryMs`.
 * Lost with the process, like the in-process click log.
 */
export class InProcessPlatformEvents {
  private queue: PlatformEvent[] = [];
  private handler: ((events: readonly PlatformEvent[]) => Promise<void>) | null = null;
  private draining: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly options: { maxPending?: number; retryMs?: number; batchSize?: number } = {}) {}

  readonly sink: PlatformEventSink = {
    publish: async (events) => {
      this.queue.push(...events);
      const max = this.options.maxPending ?? 10_000;
      if (this.queue.length > max) this.queue.splice(0, this.queue.length - max);
      this.drain();
    },
    close: async () => undefined,
  };

  readonly source: PlatformEventSource = {
    start: async (handler) => {
      if (this.handler) throw new Error('the in-process events queue has one consumer');
      this.handler = handler;
      this.closed = false;
      this.drain();
    },
    close: async () => {
      this.closed = true;
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      await this.draining;
      this.handler = null;
    },
  };

  private drain(): void {
    if (!this.handler || this.draining || this.closed || this.timer) return;
    this.draining = (async () => {
      while (this.queue.length && this.handler && !this.closed) {
        const batch = this.queue.slice(0, this.options.batchSize ?? 500);
        try {
          await this.handler(batch);
        } catch {
          this.timer = setTimeout(() => {
            this.timer = null;
            this.drain();
          }, this.options.retryMs ?? 1000);
          this.timer.unref?.();
          return;
        }
        // Only what was handled leaves the queue (newer events may have been appended meanwhile).
        this.queue.splice(0, batch.length);
      }
    })().finally(() => {
      this.draining = null;
      if (this.queue.length && !this.timer) this.drain();
    });
  }
}
