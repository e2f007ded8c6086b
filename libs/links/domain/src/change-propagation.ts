import { DomainError, ErrorCode } from '@shortlink/core';
import { identifierOf, Link, ShortUrlIdentifier } from './link';
import { LinkCacheWriter, LinkChangeFeed } from './ports';

/**
 * What follows a saved edit, delete or expiry (docs/design.md, "Edits reach every instance"): the
 * new value (or the tombstone) into the shared cache, never over a newer one, then the change told
 * to every redirect instance. When either fails the change is kept and retried every second until
 * it goes through, and the caller learns it as a 503 (the change itself is saved).
 */
export class ChangePropagation {
  /** By link: a later change of the same link replaces one still waiting. */
  private readonly pending = new Map<string, () => Promise<void>>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly cache: LinkCacheWriter,
    private readonly changes: LinkChangeFeed,
  ) {}

  updated(link: Link): Promise<void> {
    return this.propagate(identifierOf(link), link.version, () => this.cache.updated(link));
  }

  /** `version`: the link's version after the delete. */
  deleted(id: ShortUrlIdentifier, version: number): Promise<void> {
    return this.propagate(id, version, () => this.cache.deleted(id, version));
  }

  /**
   * A write that may or may not have committed (docs/design.md, "Edits reach every instance"): the
   * shared cache drops the link and every instance drops it from L1; `version` is the last version
   * known to be stored, so that value may be cached again.
   */
  forgotten(id: ShortUrlIdentifier, version: number): Promise<void> {
    return this.propagate(id, version, () => this.cache.forget(id));
  }

  /** Changes saved but not yet in the caches (the cache or the channel was down). */
  get size(): number {
    return this.pending.size;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async propagate(id: ShortUrlIdentifier, version: number, write: () => Promise<void>): Promise<void> {
    const work = async () => {
      await write();
      await this.changes.publish({ domain: id.domain, code: id.code, version });
    };
    try {
      await work();
    } catch (error) {
      this.pending.set(`${id.domain}/${id.code}`, work);
      this.timer ??= setInterval(() => void this.retry(), 1000);
      this.timer.unref?.();
      const why = 'the change is saved, but the caches could not be told yet; they will be as soon as they are reachable';
      throw new DomainError(ErrorCode.DEPENDENCY_UNAVAILABLE, why, { retryAfterSeconds: 1 }, { cause: error });
    }
  }

  private async retry(): Promise<void> {
    for (const [key, work] of [...this.pending]) {
      try {
        await work();
        this.pending.delete(key);
      } catch {
        return; // still unreachable: the next tick tries again
      }
    }
    if (this.pending.size === 0) this.stop();
  }
}
