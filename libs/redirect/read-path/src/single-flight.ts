/** Concurrent callers for one key share one execution (per instance). */
export class SingleFlight<T> {
  private readonly inflight = new Map<string, Promise<T>>();

  run(key: string, work: () => Promise<T>): Promise<T> {
    let p = this.inflight.get(key);
    if (!p) {
      const started: Promise<T> = work().finally(() => {
        if (this.inflight.get(key) === started) this.inflight.delete(key);
      });
      this.inflight.set(key, started);
      p = started;
    }
    return p;
  }

  /** Callers from now on start a new execution (the running one may have read a value since changed). */
  forget(key: string): void {
    this.inflight.delete(key);
  }

  forgetAll(): void {
    this.inflight.clear();
  }

  get size(): number {
    return this.inflight.size;
  }
}
