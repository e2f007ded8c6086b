import { parentPort, workerData } from 'worker_threads';
import { shapeRows, TargetLists } from './row-shaper';

/**
 * A batch's worker thread (docs/design.md, "Batch creation"): shapes groups of row texts
 * (row-shaper.ts) while the request's thread writes the chunk before them. Started by RowWorkers.
 */
const lists = (workerData as { lists: TargetLists }).lists;
parentPort!.on('message', (m: { id: number; texts: string[]; hashed: boolean }) => {
  parentPort!.postMessage({ id: m.id, rows: shapeRows(m.texts, m.hashed, lists) });
});
parentPort!.postMessage('ready');
