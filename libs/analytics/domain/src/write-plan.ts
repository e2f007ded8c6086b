/**
 * What each table of the store holds of one source partition (docs/analytics.md, "Exactly once"):
 * per UTC day (epoch seconds of its midnight), the last offset of the writes it received. A table
 * keeps that entry in the same part as the rows of that day, so the entry is there exactly when the
 * rows are. A day it has no entry for: nothing.
 */
export type TableLedgers = ReadonlyMap<string, ReadonlyMap<number, bigint>>;

/** Clicks in log order, as the plan reads them: the offset of the record that carried each, and its UTC day. */
export interface PlannableClicks {
  readonly length: number;
  offsetAt(i: number): bigint;
  /** Epoch seconds of the UTC midnight of the click (as counted). */
  dayAt(i: number): number;
}

/**
 * One insert of the consumer: the clicks at these positions (in log order) to these tables, whose
 * ledger entries then read `lastOffset` for the days of the clicks.
 */
export interface PlannedWrite {
  readonly targets: readonly string[];
  readonly positions: Int32Array;
  readonly lastOffset: bigint;
}

/**
 * Clicks per write at most: each insert of a write is one block in the server (below ClickHouse's
 * max_insert_block_size of 1 048 576 rows: a row per click of the visits, a row per link and minute
 * or dimension value of the rollups, never more than a row per click), so that each table receives
 * it as one part per partition, which a crash leaves whole or absent. A Kafka batch of 1 MiB
 * (about 170 000 clicks) is then one write: fewer parts to merge, fewer round trips.
 */
export const MAX_CLICKS_PER_WRITE = 250_000;

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
  clicks: PlannableClicks,
  lastOffset: bigint,
  targets: readonly string[],
  ledgers: TableLedgers,
  maxClicksPerWrite = MAX_CLICKS_PER_WRITE,
): PlannedWrite[] {
  if (clicks.length === 0) return [];
  const days = new Set<number>();
  for (let i = 0; i < clicks.length; i++) days.add(clicks.dayAt(i));
  // The common case: no table holds anything of this batch (no attempt of it was cut short).
  const first = clicks.offsetAt(0);
  if (targets.every((t) => [...days].every((day) => (ledgers.get(t)?.get(day) ?? -1n) < first))) {
    return writesOf(
      clicks,
      [...targets],
      Array.from({ length: clicks.length }, (_, i) => i),
      lastOffset,
      maxClicksPerWrite,
    );
  }
  const byDay = new Map<number, number[]>();
  for (let i = 0; i < clicks.length; i++) {
    const day = clicks.dayAt(i);
    (byDay.get(day) ?? byDay.set(day, []).get(day)!).push(i);
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
      while (n < list.length && clicks.offsetAt(list[n]) <= through) n++;
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
    const lacked: number[] = [];
    for (let i = 0; i < clicks.length; i++) if (clicks.offsetAt(i) > held.get(clicks.dayAt(i))!) lacked.push(i);
    writes.push(...writesOf(clicks, tables, lacked, lastOffset, maxClicksPerWrite));
  }
  return writes;
}

/** The writes of these clicks to these tables, cut at record boundaries; the last ends at the batch's end. */
function writesOf(clicks: PlannableClicks, targets: string[], positions: readonly number[], lastOffset: bigint, max: number): PlannedWrite[] {
  const chunks = chunksOf(clicks, positions, max);
  return chunks.map((chunk, k) => ({
    targets,
    positions: Int32Array.from(chunk),
    lastOffset: k === chunks.length - 1 ? lastOffset : clicks.offsetAt(chunk[chunk.length - 1]),
  }));
}

/** Consecutive runs of at most `max` positions, never splitting the clicks of one record (one offset); a record larger than `max` is a run of its own. */
function chunksOf(clicks: PlannableClicks, positions: readonly number[], max: number): Array<readonly number[]> {
  if (positions.length <= max) return [positions];
  const chunks: number[][] = [];
  let current: number[] = [];
  for (let k = 0; k < positions.length; k++) {
    const offset = clicks.offsetAt(positions[k]);
    const recordStarts = k === 0 || clicks.offsetAt(positions[k - 1]) !== offset;
    if (recordStarts && current.length > 0 && current.length + recordLength(clicks, positions, k) > max) {
      chunks.push(current);
      current = [];
    }
    current.push(positions[k]);
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

function recordLength(clicks: PlannableClicks, positions: readonly number[], from: number): number {
  const offset = clicks.offsetAt(positions[from]);
  let n = 1;
  while (from + n < positions.length && clicks.offsetAt(positions[from + n]) === offset) n++;
  return n;
}
