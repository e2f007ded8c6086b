/**
 * Opens a connection-backed store on first use and again after a failure (at most once per
 * `retryMs`), so an app boots and answers 503 while a database is down instead of exiting.
 */
export class LazyOpen<T extends { close(): Promise<void> }> {
  private opening: Promise<T> | null = null;
  private lastFailureAt = 0;
  private lastError: unknown = null;

  constructor(
    private readonly what: string,
    private readonly open: () => Promise<T>,
    private readonly retryMs = 1000,
  ) {}

  get(): Promise<T> {
    if (this.opening) return this.opening;
    if (Date.now() - this.lastFailureAt < this.retryMs) {
      return Promise.reject(new Error(`${this.what} is unreachable (${(this.lastError as Error)?.message ?? 'unknown error'}); retrying`));
    }
    const p = this.open();
    this.opening = p;
    p.catch((error) => {
      if (this.opening === p) this.opening = null;
      this.lastFailureAt = Date.now();
      this.lastError = error;
    });
    return p;
  }

  async close(): Promise<void> {
    const p = this.opening;
    this.opening = null;
    if (p) await (await p.catch(() => null))?.close();
  }
}

/**
 * An object with the methods of `prototype`, each opening the store first (once), then calling the
 * same method on the part `pick` chooses: the lazy form of a whole port without writing each method
 * twice. Only the prototype's own methods exist on it, so frameworks probing for hooks such as
 * `onModuleInit` or `then` find nothing.
 */
export function forwardWhenOpen<S extends { close(): Promise<void> }, T extends object>(lazy: LazyOpen<S>, pick: (store: S) => T, prototype: T): T {
  const forwarded: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const method of Object.getOwnPropertyNames(prototype)) {
    if (method === 'constructor' || typeof (prototype as Record<string, unknown>)[method] !== 'function') continue;
    forwarded[method] = async (...args) => (pick(await lazy.get()) as Record<string, (...a: unknown[]) => unknown>)[method](...args);
  }
  return forwarded as unknown as T;
}
