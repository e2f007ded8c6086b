import { Clock, systemClock } from '@shortlink/core';
import type { Link, LinkObserver, LinkRepository } from '@shortlink/links-domain';
import { indexedLinkOf } from './health';
import { LiveRecheck } from './live-recheck';
import { IndexedLink, LinkTargetIndex } from './ports';

export interface TargetIndexerOptions {
  /** Changes kept in memory while the meta database does not take them; beyond, the oldest are dropped (the sweep finds them). */
  readonly maxPending?: number;
  readonly onDropped?: (count: number) => void;
  readonly onFailed?: (error: unknown) => void;
}

/** Links written to the index per statement group. */
const FLUSH_SIZE = 500;

/**
 * Keeps the index of targets as links change (LinkService's LinkObserver; docs/design.md, "Trust
 * and safety"): each change is queued in memory and written in the background, the latest per
 * link, without holding the request. A change lost to a crash or to a long outage of the meta
 * database is found by the sweep.
 */
export class TargetIndexer implements LinkObserver {
  /** By link id: the link's targets now, or null once it is deleted. */
  private readonly pending = new Map<string, IndexedLink | null>();
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly listeners: Array<(linkIds: readonly string[]) => void> = [];

  constructor(
    private readonly index: LinkTargetIndex,
    private readonly options: TargetIndexerOptions = {},
    private readonly clock: Clock = systemClock,
  ) {}

  stored(links: readonly Link[]): void {
    for (const link of links) this.queue(link.id, indexedLinkOf(link));
  }

  /** `listener` gets the ids of the links each write put into the index (e.g. for their targets' first check). */
  afterIndexed(listener: (linkIds: readonly string[]) => void): void {
    this.listeners.push(listener);
  }

  removed(link: Link): void {
    this.queue(link.id, null);
  }

  /** Settles once what was queued before the call is written (or failed, to be tried again). */
  async idle(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.idle();
    if (this.pending.size) await this.flush().catch(() => undefined);
  }

  private queue(linkId: string, value: IndexedLink | null): void {
    this.pending.delete(linkId);
    this.pending.set(linkId, value);
    const max = this.options.maxPending ?? 100_000;
    if (this.pending.size > max) {
      let drop = this.pending.size - max;
      this.options.onDropped?.(drop);
      for (const key of this.pending.keys()) {
        if (drop-- <= 0) break;
        this.pending.delete(key);
      }
    }
    this.kick();
  }

  private kick(): void {
    if (this.flushing || this.timer || this.stopped) return;
    this.flushing = this.flush()
      .catch((error: unknown) => {
        this.options.onFailed?.(error);
        if (this.stopped) return;
        this.timer = setTimeout(() => {
          this.timer = null;
          this.kick();
        }, 1000);
        this.timer.unref?.();
      })
      .finally(() => {
        this.flushing = null;
        if (this.pending.size && !this.timer) this.kick();
      });
  }

  private async flush(): Promise<void> {
    while (this.pending.size) {
      const batch = [...this.pending.entries()].slice(0, FLUSH_SIZE);
      const stored = batch.flatMap(([, v]) => (v ? [v] : []));
      const removed = batch.filter(([, v]) => v === null).map(([id]) => id);
      if (stored.length) await this.index.index(stored, new Date(this.clock.now()));
      if (removed.length) await this.index.unindex(removed);
      if (stored.length) for (const listener of this.listeners) listener(stored.map((l) => l.linkId));
      // Only what was written leaves the queue: a newer change of the same link queued meanwhile stays.
      for (const [id, value] of batch) if (this.pending.get(id) === value) this.pending.delete(id);
    }
  }
}

export interface SweepOptions {
  /** Links read per second at most (SAFETY_SWEEP_LINKS_PER_SECOND). */
  readonly linksPerSecond: number;
  readonly pageSize?: number;
  /** Waits between pages without a timer of its own (tests pass an immediate one). */
  readonly pause?: (ms: number) => Promise<void>;
}

/**
 * A pass over every link of every shard (docs/design.md, "Trust and safety"): its targets into the
 * index (what the observer missed: links from before this feature, a change lost to a crash), and
 * its targets judged by the feeds in memory (a link the index did not know when its feed changed).
 * Paced to `linksPerSecond`; one instance at a time (the caller holds a lease).
 */
export class SafetySweep {
  constructor(
    private readonly links: Pick<LinkRepository, 'linkPages'>,
    private readonly index: LinkTargetIndex,
    private readonly recheck: LiveRecheck,
    private readonly options: SweepOptions,
    private readonly clock: Clock = systemClock,
  ) {}

  /** One pass; `stillHeld` is asked between pages (a lost lease or a stop ends the pass). */
  async pass(stillHeld: () => boolean | Promise<boolean> = () => true): Promise<{ links: number; escalated: number }> {
    const pageSize = this.options.pageSize ?? 500;
    const pause = this.options.pause ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.()));
    const counts = { links: 0, escalated: 0 };
    for await (const page of this.links.linkPages(pageSize)) {
      const started = this.clock.now();
      const indexed = page.map(indexedLinkOf);
      await this.index.index(indexed, new Date(started));
      for (const link of indexed) if (await this.recheck.judgeIndexed(link)) counts.escalated++;
      counts.links += page.length;
      if (!(await stillHeld())) break;
      const spent = this.clock.now() - started;
      const due = (page.length / this.options.linksPerSecond) * 1000;
      if (due > spent) await pause(due - spent);
    }
    return counts;
  }
}
