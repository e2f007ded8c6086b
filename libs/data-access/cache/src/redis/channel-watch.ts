/** What one publisher has been heard saying. */
interface Heard {
  /** The lowest number not heard yet. */
  next: number;
  /** Numbers heard above `next` (a cluster may deliver two messages of one publisher out of order). */
  readonly ahead: Set<number>;
  /** Since when a number below those in `ahead` is missing. */
  missingSince: number | null;
  lastHeard: number;
}

export interface ChannelWatchOptions {
  /** How long a missing number may still arrive (PUBLISH goes to any node of a cluster: two messages can cross). */
  readonly reorderMs: number;
  /** No message of any known publisher for this long: the subscription is suspect (its node hangs, or it was cut silently). */
  readonly silenceMs: number;
}

export type ChannelState = 'ok' | 'gap' | 'silent';

/**
 * A subscriber's view of the change channel (docs/design.md, "Edits reach every instance"): every
 * publisher numbers its messages and says it is alive every second, so a subscriber knows when it
 * missed a message (a number that never came) or hears nothing while it should (its node is
 * paused or cut off, and Redis dropped the cluster-bus messages meant for it without closing the
 * subscriber's connection). Plain bookkeeping with the time given: the feed calls it.
 */
export class ChannelWatch {
  private readonly publishers = new Map<string, Heard>();
  private subscribedAt = 0;
  private missed = false;

  constructor(private readonly options: ChannelWatchOptions) {}

  /** The subscription (re)started at `now`: nothing heard on it yet. */
  reset(now: number): void {
    this.publishers.clear();
    this.subscribedAt = now;
    this.missed = false;
  }

  /** A message numbered `seq` of `publisher` arrived at `now`. */
  heard(publisher: string, seq: number, now: number): void {
    const known = this.publishers.get(publisher);
    if (!known) {
      // A publisher that speaks every second and was not heard for a whole silence is one whose
      // messages this subscription missed, unless this is its first message.
      if (seq > 1 && now - this.subscribedAt >= this.options.silenceMs) this.missed = true;
      this.publishers.set(publisher, { next: seq + 1, ahead: new Set(), missingSince: null, lastHeard: now });
      return;
    }
    known.lastHeard = now;
    if (seq < known.next) return; // late, or twice: already counted
    if (seq > known.next) {
      known.ahead.add(seq);
      known.missingSince ??= now;
      return;
    }
    known.next++;
    while (known.ahead.delete(known.next)) known.next++;
    if (known.ahead.size === 0) known.missingSince = null;
  }

  /**
   * `gap`: a message was missed (a number missing for longer than the reorder window); the count
   * starts again after the highest number heard. `silent`: no known publisher was heard for the
   * silence window. A publisher silent that long while others speak has stopped: it is forgotten.
   */
  check(now: number): ChannelState {
    let gap = this.missed;
    this.missed = false;
    let lastHeard = -Infinity;
    for (const [name, p] of this.publishers) {
      if (p.missingSince !== null && now - p.missingSince > this.options.reorderMs) {
        gap = true;
        p.next = Math.max(...p.ahead) + 1;
        p.ahead.clear();
        p.missingSince = null;
      }
      lastHeard = Math.max(lastHeard, p.lastHeard);
      if (now - p.lastHeard > this.options.silenceMs) this.publishers.delete(name);
    }
    if (gap) return 'gap';
    return lastHeard !== -Infinity && now - lastHeard > this.options.silenceMs ? 'silent' : 'ok';
  }
}
