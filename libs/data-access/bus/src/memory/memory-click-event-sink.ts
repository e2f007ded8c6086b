import { ClickEvent, ClickEventSink } from '@shortlink/clicks-domain';
import { InProcessClickLog } from './in-process-click-log';

/** Producer side on the in-process log: appending is synchronous, so send never fails or waits. */
export class MemoryClickEventSink implements ClickEventSink {
  private closed = false;

  constructor(private readonly log: InProcessClickLog) {}

  async send(events: readonly ClickEvent[]): Promise<void> {
    if (this.closed) throw new Error('MemoryClickEventSink is closed');
    this.log.append(events);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
