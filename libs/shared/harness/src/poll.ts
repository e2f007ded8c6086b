/** Waiting: a plain sleep, and polling a probe until it holds. */

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Calls `probe` every `intervalMs` until it returns a truthy value (returned) or `timeoutMs`
 * passes (throws, with the last error the probe threw). A throwing probe counts as "not yet".
 */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 30_000, intervalMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await sleep(intervalMs);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}
