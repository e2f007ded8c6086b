import { ShardRouter } from './shard-router';

export interface KeyMove {
  readonly key: string;
  readonly from: string;
  readonly to: string;
}

export interface RebalancePlan {
  readonly moves: readonly KeyMove[];
  readonly examined: number;
  /** moves / examined, 0 when nothing was examined. */
  readonly movedFraction: number;
  /** Count of moved keys per (from → to) pair, e.g. "s1->s4". */
  readonly flows: Readonly<Record<string, number>>;
}

/** Which of the given keys change owner between two routers (the input of a resharding run). */
export function planRebalance(before: ShardRouter, after: ShardRouter, keys: Iterable<string>): RebalancePlan {
  const moves: KeyMove[] = [];
  const flows: Record<string, number> = {};
  let examined = 0;
  for (const key of keys) {
    examined++;
    const from = before.shardFor(key);
    const to = after.shardFor(key);
    if (from !== to) {
      moves.push({ key, from, to });
      const flow = `${from}->${to}`;
      flows[flow] = (flows[flow] ?? 0) + 1;
    }
  }
  return { moves, examined, movedFraction: examined === 0 ? 0 : moves.length / examined, flows };
}
