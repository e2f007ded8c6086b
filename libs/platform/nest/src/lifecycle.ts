import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';

/**
 * The start and stop of the objects a module's factories make, registered by each factory where it
 * makes the object (docs/design.md, "The house"): started in that order before the app listens,
 * stopped in the reverse order after its HTTP server closed and before the ports close. Provide one
 * per module (not exported), so that a module's objects start after those of the modules it imports
 * and stop before them.
 */
@Injectable()
export class Lifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly starts: Array<() => void | Promise<unknown>> = [];
  private readonly stops: Array<() => void | Promise<unknown>> = [];

  /** `start` before the app serves; `stop` at shutdown. */
  manage(hooks: { readonly start?: () => void | Promise<unknown>; readonly stop?: () => void | Promise<unknown> }): void {
    if (hooks.start) this.starts.push(hooks.start);
    if (hooks.stop) this.stops.push(hooks.stop);
  }

  async onApplicationBootstrap(): Promise<void> {
    for (const start of this.starts) await start();
  }

  async onApplicationShutdown(): Promise<void> {
    for (const stop of [...this.stops].reverse()) await stop();
  }
}

/**
 * A job that runs every `intervalMs` while the app runs (started with the app, stopped at its
 * shutdown): each context schedules its own housekeeping (expiry, purges). A failed run is logged
 * by `run` itself and the next one comes at its time.
 */
export function scheduleJob(lifecycle: Lifecycle, intervalMs: number, run: () => Promise<unknown>): void {
  let timer: NodeJS.Timeout | null = null;
  lifecycle.manage({
    start: () => {
      timer = setInterval(() => void run().catch(() => undefined), intervalMs);
      timer.unref();
    },
    stop: () => {
      if (timer) clearInterval(timer);
    },
  });
}
