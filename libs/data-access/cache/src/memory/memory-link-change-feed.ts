import { EventEmitter } from 'events';
import { LinkChange, LinkChangeFeed } from '@shortlink/links-domain';

/** The embedded twin of the change channel: the three apps share one process, so one emitter. */
export class MemoryLinkChangeFeed implements LinkChangeFeed {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  async publish(change: LinkChange): Promise<void> {
    this.emitter.emit('change', { domain: change.domain, code: change.code, version: change.version });
  }

  async subscribe(onChange: (change: LinkChange) => void): Promise<() => Promise<void>> {
    this.emitter.on('change', onChange);
    return async () => void this.emitter.off('change', onChange);
  }

  /** One process: nothing is lost, so nothing needs counting. */
  async heartbeat(): Promise<void> {}

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}
