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

/**
 * What is loaded: a server and the request paths it is sent (cycled). A path may carry request
 * headers after tab characters, `/abc?x=1\tX-Forwarded-For: 203.0.113.7\tUser-Agent: …`, e.g. to
 * play many visitors through a trusted proxy; every loader sends them.
 */
export interface LoadTarget {
  base: string;
  paths: readonly string[];
}

/** A path of a LoadTarget taken apart: the path itself and its headers. */
export function requestOf(line: string): { path: string; headers: Record<string, string> } {
  const [path, ...headers] = line.split('\t');
  return { path, headers: Object.fromEntries(headers.map((h) => [h.slice(0, h.indexOf(':')).trim(), h.slice(h.indexOf(':') + 1).trim()])) };
}

/** A file in the rig's scratch directory holding `lines`, written once per distinct content. */
export function scratchFile(rig: LoadRig, prefix: string, lines: readonly string[]): string {
  const text = lines.join('\n') + '\n';
  const file = join(rig.tmpDir, `${prefix}-${lines.length}-${createHash('sha1').update(text).digest('hex').slice(0, 12)}.txt`);
  if (!existsSync(file)) writeFileSync(file, text);
  return file;
}
