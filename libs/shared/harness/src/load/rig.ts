import { createHash } from 'crypto';
import { existsSync, writeFileSync } from 'fs';
import { join } from 'path';
import { ProcessGroup } from '../process';

/** Where a loader runs: its scratch directory, the group its process joins, the core it is pinned to. */
export interface LoadRig {
  tmpDir: string;
  group: ProcessGroup;
  /** `taskset -c <core>` for the loader (none: unpinned). */
  core?: string;
}

/** What is loaded: a server and the request paths it is sent (cycled). */
export interface LoadTarget {
  base: string;
  paths: readonly string[];
}

/** A file in the rig's scratch directory holding `lines`, written once per distinct content. */
export function scratchFile(rig: LoadRig, prefix: string, lines: readonly string[]): string {
  const text = lines.join('\n') + '\n';
  const file = join(rig.tmpDir, `${prefix}-${lines.length}-${createHash('sha1').update(text).digest('hex').slice(0, 12)}.txt`);
  if (!existsSync(file)) writeFileSync(file, text);
  return file;
}
