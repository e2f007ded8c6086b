import type {
  ClickAggregateStore,
  ConversionBatch,
  ConversionDimensions,
  ConversionEventSource,
  ConversionRow,
  ConvertedClick,
} from '@shortlink/clicks-domain';
import type { ContextLogger } from '@shortlink/nest-platform';

/** Pause before a start that failed (the bus down at boot) is tried again. */
const RESTART_MS = 5000;
/**
 * A click whose minute is this recent may still be on its way to the raw visits (the redirect's
 * buffer, the clicks topic, the click consumer): its conversion waits for it. An older click's visit
 * is there or never will be (dropped by retention, or the click was shed).
 */
const RECENT_CLICK_MS = 5 * 60_000;
/** First pause between two looks for a recent click's visit; doubled up to the deadline. */
const FIRST_LOOK_PAUSE_MS = 200;

export interface ConversionConsumerOptions {
  /** How long a batch waits for the visits of recent clicks (CONVERSION_DIMENSIONS_WAIT_MS); 0: never. */
  readonly dimensionsWaitMs: number;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/**
 * The analytics group on the conversions topic (docs/analytics.md, "Conversions"): each partition
 * batch goes into the `conversions` table, guarded as the clicks are (docs/analytics.md, "Exactly
 * once"): the committed progress per source and partition skips a replay; the table is its own
 * ledger (its highest offset of that source partition, in the same part as the rows), so a batch
 * cut short after its insert is not written twice; and every answer counts an event key once, so a
 * producer's resend or a retried report that reached the bus twice counts once. The progress is
 * committed after the insert; a failed insert leaves the batch to come again. Each row carries the
 * dimensions of its click, copied from the click's raw visit (withDimensions).
 */
export class ConversionConsumer {
  /** `${source}/${partition}` -> last offset known written and committed. */
  private readonly done = new Map<string, bigint | undefined>();
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;
  counted = 0;

  constructor(
    private readonly store: ClickAggregateStore,
    private readonly source: ConversionEventSource,
    private readonly logger: Pick<ContextLogger, 'warn' | 'log'>,
    private readonly options: ConversionConsumerOptions = { dimensionsWaitMs: 0 },
  ) {}

  /** Joins the group in the background (a bus down at boot is tried again every 5 s); the app does not wait. */
  start(): void {
    this.stopped = false;
    this.source
      .start((batch) => this.handle(batch))
      .catch((error: unknown) => {
        if (this.stopped) return;
        this.logger.warn(`conversions consumer not started (retried in ${RESTART_MS / 1000} s): ${(error as Error)?.message}`);
        this.timer = setTimeout(() => this.start(), RESTART_MS);
        this.timer.unref?.();
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.source.close();
  }

  async handle(batch: ConversionBatch): Promise<void> {
    if (batch.messages.length === 0) return;
    const { source, partition } = batch;
    const key = `${source}/${partition}`;
    let done = this.done.get(key);
    if (!this.done.has(key) || (done !== undefined && BigInt(batch.messages[0].offset) > done + 1n)) {
      // First batch of this partition here, or one that does not continue where this member left off (a rebalance).
      const [progress, through] = await Promise.all([this.store.ingestedOffsets(source), this.store.conversionsThrough(source, partition)]);
      done = max(progress.get(partition), through);
    }
    const rows: ConversionRow[] = batch.messages
      .filter((m) => done === undefined || BigInt(m.offset) > done)
      .map((m) => ({ event: m.event, source, partition, offset: m.offset }));
    const lastOffset = batch.messages[batch.messages.length - 1].offset;
    if (rows.length > 0) await this.store.writeConversions(await this.withDimensions(rows));
    await this.store.commit({ source, partition, lastOffset }, []);
    this.done.set(key, max(done, BigInt(lastOffset)));
    this.counted += rows.length;
  }

  private async withDimensions(rows: ConversionRow[]): Promise<ConversionRow[]> {
    const now = this.options.now ?? Date.now;
    const sleep = this.options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.()));
    const clicks = new Map<string, ConvertedClick>();
    for (const { event: e } of rows)
      if (e.clickId !== '' && !clicks.has(e.clickId))
        clicks.set(e.clickId, { tenantId: e.tenantId, domain: e.domain, code: e.code, clickId: e.clickId, clickAt: e.clickAt });
    const found: Map<string, ConversionDimensions> = clicks.size ? await this.store.clickDimensions([...clicks.values()]) : new Map();
    const deadline = now() + this.options.dimensionsWaitMs;
    let pause = FIRST_LOOK_PAUSE_MS;
    for (;;) {
      const waiting = [...clicks.values()].filter((c) => !found.has(c.clickId) && c.clickAt !== undefined && c.clickAt >= now() - RECENT_CLICK_MS);
      const left = deadline - now();
      if (waiting.length === 0 || left <= 0 || this.stopped) break;
      await sleep(Math.min(pause, left));
      pause *= 2;
      for (const [clickId, dims] of await this.store.clickDimensions(waiting)) found.set(clickId, dims);
    }
    return rows.map((r) => {
      const dims = found.get(r.event.clickId);
      return dims === undefined ? r : { ...r, dims };
    });
  }
}

/**
 * The rows with the dimensions of their clicks (docs/design.md, "Conversions"), looked up in the raw
 * visits by click id. A lead is often reported seconds after its click, before the click's visit is
 * written: for a recent click the batch looks again, with growing pauses, up to the configured wait;
 * a click still not found then (or an old one) counts with unknown dimensions. The lookup is the same
 * on a replay, so a redelivered batch writes the same rows.
 */

const max = (a: bigint | undefined, b: bigint | undefined): bigint | undefined => (a === undefined ? b : b === undefined ? a : a > b ? a : b);
