import { existsSync } from 'fs';
import { dirname, join } from 'path';
import { Worker } from 'worker_threads';
import { ShapedRow, shapeRows, TargetLists } from './row-shaper';

interface Pending {
  readonly resolve: (rows: ShapedRow[]) => void;
  readonly reject: (error: Error) => void;
}

interface Slot {
  readonly worker: Worker;
  readonly pending: Map<number, Pending>;
  /** The thread has loaded its code (it says so): until then its groups are shaped on the request's thread. */
  ready: boolean;
}

/**
 * The worker threads that shape a batch's rows (docs/design.md, "Batch creation"): `size` threads,
 * each group to the one with the fewest groups in flight; with size 0 the request's thread shapes
 * them itself. The groups of a thread that fails (or is stopped) are shaped on the request's thread,
 * and the thread is replaced on the next group.
 */
export class RowWorkers {
  private readonly workers: Array<Slot | null>;
  private nextId = 0;
  private closed = false;

  constructor(
    readonly size: number,
    private readonly lists: TargetLists,
  ) {
    this.workers = Array.from({ length: size }, () => null);
  }

  /** Starts the threads now (they load their code in the background), instead of on the first group. */
  start(): void {
    for (let i = 0; i < this.size; i++) this.slot(i);
  }

  shape(texts: readonly string[], hashed: boolean): Promise<ShapedRow[]> {
    if (this.size === 0 || this.closed) return Promise.resolve(shapeRows(texts, hashed, this.lists));
    let best = 0;
    for (let i = 1; i < this.size; i++) if ((this.workers[i]?.pending.size ?? 0) < (this.workers[best]?.pending.size ?? 0)) best = i;
    const slot = this.slot(best);
    // A thread still loading its code (seconds from the sources) would hold the batch up: not yet.
    if (!slot.ready) return Promise.resolve(shapeRows(texts, hashed, this.lists));
    const id = this.nextId++;
    const onThread = new Promise<ShapedRow[]>((resolve, reject) => {
      slot.pending.set(id, { resolve, reject });
      slot.worker.postMessage({ id, texts, hashed });
    });
    // A thread that failed (or was stopped) leaves its groups to the request's thread: the same rows, slower.
    return onThread.catch(() => {
      return shapeRows(texts, hashed, this.lists);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((w) => w?.worker.terminate()));
  }

  private slot(i: number): Slot {
    const existing = this.workers[i];
    if (existing) return existing;
    const pending = new Map<number, Pending>();
    const worker = startWorker(this.lists);
    worker.unref(); // a batch holds the process open, not an idle pool
    const slot: Slot = { worker, pending, ready: false };
    const fail = (error: Error) => {
      if (this.workers[i] === slot) this.workers[i] = null;
      for (const p of pending.values()) p.reject(error);
      pending.clear();
    };
    worker.on('message', (m: { id: number; rows: ShapedRow[] } | 'ready') => {
      if (m === 'ready') return void (slot.ready = true);
      const p = pending.get(m.id);
      pending.delete(m.id);
      p?.resolve(m.rows);
    });
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`a batch row worker exited (code ${code})`)));
    this.workers[i] = slot;
    return slot;
  }
}

/**
 * The worker's code: compiled JavaScript beside this file (the image; `require.resolve` is what makes
 * tools/build.js compile it), or the TypeScript source, loaded through the repository's
 * tools/register.js as the apps and the tests run the sources.
 */
function startWorker(lists: TargetLists): Worker {
  const file = require.resolve('./row-worker');
  if (file.endsWith('.js')) return new Worker(file, { workerData: { lists } });
  const register = findUp(dirname(file), join('tools', 'register.js'));
  const code = `require(${JSON.stringify(register)}); require(${JSON.stringify(file)});`;
  return new Worker(code, { eval: true, workerData: { lists } });
}

function findUp(from: string, file: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, file))) return join(dir, file);
    if (dirname(dir) === dir) throw new Error(`${file} not found above ${from}`);
  }
}
