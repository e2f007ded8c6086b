import { CountedClick } from './aggregation';

/**
 * What each table of the store holds of one source partition (docs/analytics.md, "Exactly once"):
 * per UTC day (epoch seconds of its midnight), the last offset of the writes it received. A table
 * keeps that entry in the same part as the rows of that day, so the entry is there exactly when the
 * rows are. A day it has no entry for: nothing.
 */
export type TableLedgers = ReadonlyMap<string, ReadonlyMap<number, bigint>>;

/** One insert of the consumer: these clicks to these tables, whose ledger entries then read `lastOffset` for the days of the clicks. */
export interface PlannedWrite {
  readonly targets: readonly string[];
  readonly clicks: readonly CountedClick[];
  readonly lastOffset: bigint;
}

/**
 * Clicks per write at most: a write is one block in the server (below ClickHouse's
 * max_insert_block_size of 1 048 576 rows, with a row per click and one per visitor and minute), so
 * that each table receives it as one part per partition, which a crash leaves whole or absent.
 */
export const MAX_CLICKS_PER_WRITE = 50_000;

export const DAY_SECONDS = 86_400;
/** The UTC day of an instant (epoch ms), as epoch seconds of its midnight. */
export const dayOf = (epochMs: number): number => Math.floor(epochMs / (DAY_SECONDS * 1000)) * DAY_SECONDS;

/**
 * The writes that give every table what it lacks of a batch, and nothing it holds. `clicks` are the
 * batch's counted clicks after its committed offset, in log order; `lastOffset` the batch's last.
 * A table lacks the clicks of each day above its ledger entry for that day. Tables that lack the
 * same clicks (always all of them, unless an earlier attempt was cut short) share one write; a write
 * of more than `maxClicksPerWrite` clicks is cut at record boundaries into several, in log order,
 * each but the last ending at the offset of its last click.
 */
export function planWrites(
  clicks: readonly CountedClick[],
  lastOffset: bigint,
  targets: readonly string[],
  ledgers: TableLedgers,
  maxClicksPerWrite = MAX_CLICKS_PER_WRITE,
): PlannedWrite[] {
  const byDay = new Map<number, CountedClick[]>();
  for (const c of clicks) {
    const day = dayOf(c.event.occurredAt);
    (byDay.get(day) ?? byDay.set(day, []).get(day)!).push(c);
  }
  // Per table: how many leading clicks of each day it holds (a day's clicks are in offset order).
  const groups = new Map<string, { targets: string[]; held: Map<number, bigint> }>();
  for (const target of targets) {
    const held = new Map<number, bigint>();
    const skipped: number[] = [];
    let lacking = false;
    for (const [day, list] of byDay) {
      const through = ledgers.get(target)?.get(day) ?? -1n;
      held.set(day, through);
      let n = 0;
      while (n < list.length && list[n].offset <= through) n++;
      skipped.push(n);
      if (n < list.length) lacking = true;
    }
    if (!lacking) continue;
    const key = skipped.join(',');
    const group = groups.get(key);
    if (group) group.targets.push(target);
    else groups.set(key, { targets: [target], held });
  }
  const writes: PlannedWrite[] = [];
  for (const { targets: tables, held } of groups.values()) {
    const lacked = clicks.filter((c) => c.offset > held.get(dayOf(c.event.occurredAt))!);
    for (const chunk of chunksOf(lacked, maxClicksPerWrite)) {
      const end = chunk === lacked || chunk[chunk.length - 1] === lacked[lacked.length - 1] ? lastOffset : chunk[chunk.length - 1].offset;
      writes.push({ targets: tables, clicks: chunk, lastOffset: end });
    }
  }
  return writes;
}

/** Consecutive runs of at most `max` clicks, never splitting the clicks of one record (one offset); a record larger than `max` is a run of its own. */
function chunksOf(clicks: readonly CountedClick[], max: number): Array<readonly CountedClick[]> {
  if (clicks.length <= max) return [clicks];
  const chunks: CountedClick[][] = [];
  let current: CountedClick[] = [];
  for (let i = 0; i < clicks.length; i++) {
    const c = clicks[i];
    const recordStarts = i === 0 || clicks[i - 1].offset !== c.offset;
    if (recordStarts && current.length > 0 && current.length + recordLength(clicks, i) > max) {
      chunks.push(current);
      current = [];
    }
    current.push(c);
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

function recordLength(clicks: readonly CountedClick[], from: number): number {
  let n = 1;
  while (from + n < clicks.length && clicks[from + n].offset === clicks[from].offset) n++;
  return n;
}
