import { SNAPSHOT_STORE } from '@shortlink/read-path';
import { FileSnapshotStore } from '@shortlink/cache';
import { itself, portSpec } from '../port';

/** Where a redirect instance keeps its hot-link snapshot (a local file). */
export const snapshotPort = portSpec({
  name: 'snapshot',
  open: (config) => new FileSnapshotStore(config.redirect.snapshot.file),
  provides: [[SNAPSHOT_STORE, itself]],
});
