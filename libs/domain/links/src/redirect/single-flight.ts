/** Concurrent callers for one key share one execution (per instance). */
export class SingleFlight<T> {
  private readonly inflight = new Map<string, Promise<T>>();

  run(key: string, work: () => Promise<T>): Promise<T> {
    let p = this.inflight.get(key);
    if (!p) {
      p = work().finally(() => this.inflight.delete(key));
      this.inflight.set(key, p);
    }
    return p;
  }

  get size(): number {
    return this.inflight.size;
  }
}
