/**
 * A link write that failed in a way that may have committed all the same: its deadline passed while
 * the shard went on, or its connection broke after the statement was sent (docs/design.md, "Edits
 * reach every instance"). The repository marks such an error with a promise that resolves once the
 * shard has ended the statement (true), or once the repository stopped waiting for that (false). An
 * error without the mark certainly wrote nothing (a domain answer, a breaker or a frozen move that
 * refused before anything was sent).
 */
const settledBy = new WeakMap<object, Promise<boolean>>();

/** Marks `error` as the failure of a write that may have committed; `settled` as above. */
export function markUncertainWrite(error: unknown, settled: Promise<boolean>): void {
  if (typeof error === 'object' && error !== null) settledBy.set(error, settled);
}

/** When the write that failed with `error` has ended on its shard; null when it certainly did not commit. */
export function uncertainWriteSettled(error: unknown): Promise<boolean> | null {
  return typeof error === 'object' && error !== null ? (settledBy.get(error) ?? null) : null;
}
