/** Helpers of a benchmark's markdown report: numbers, tables, machine facts, the result file's name. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'fs';
import { cpus, loadavg } from 'os';
import { join } from 'path';
import { REPO_ROOT } from './paths';
import { shellOutput } from './shell';

export const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

export const fmt = (n: number, d = 2) => n.toFixed(d);

/** A share in %, "100" when it is all and "<0.1" when it rounds to nothing. */
export const share = (part: number, whole: number) => (part === whole ? '100' : (part / whole) * 100 < 0.1 ? '<0.1' : ((part / whole) * 100).toFixed(1));

export type Column = readonly [title: string, align: 'l' | 'r'];

/** A markdown table: header, alignment row (`---` or `---:`), one line per row. */
export function markdownTable(columns: readonly Column[], rows: ReadonlyArray<readonly (string | number)[]>): string {
  const line = (cells: readonly (string | number)[]) => `| ${cells.join(' | ')} |`;
  return [line(columns.map(([t]) => t)), `|${columns.map(([, a]) => (a === 'r' ? '---:' : '---')).join('|')}|`, ...rows.map(line)].join('\n');
}

/** The 1/5/15-minute load averages, as "a b c". */
export const loadAverages = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/**
 * The machine a run was measured on, as markdown list items: date, nproc, kernel, CPU model, node,
 * the given tool lines, load average at start and now, and the commit (marked when `dirtyPaths` have local changes).
 */
export function machineFacts(o: { start: Date; startLoad: string; tools?: readonly string[]; dirtyPaths?: string }): string[] {
  const model = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpus()[0]?.model ?? '?';
  const paths = o.dirtyPaths ?? 'libs apps tools';
  return [
    `- date: ${o.start.toISOString()} (start)`,
    `- nproc: ${shellOutput('nproc')}`,
    `- kernel (uname -r): ${shellOutput('uname -r')}`,
    `- CPU: ${model}`,
    `- node: ${process.version}`,
    ...(o.tools ?? []).map((t) => `- ${t}`),
    `- load average (1/5/15 min) at start: ${o.startLoad}; at end: ${loadAverages()}`,
    `- code: ${shellOutput('git rev-parse --short HEAD')}${shellOutput(`git status --porcelain -- ${paths}`) ? ` (with local changes in ${paths.split(' ').join('/')})` : ''}`,
  ];
}

/** `<dir>/<prefix>-<yyyy-mm-dd>.md`, or `-2`, `-3`, … when taken. */
export function datedResultFile(dir: string, prefix: string, date: Date): string {
  const day = `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
  let file = join(dir, `${prefix}-${day}.md`);
  for (let i = 2; existsSync(file); i++) file = join(dir, `${prefix}-${day}-${i}.md`);
  return file;
}

/** Writes a bench's report into bench/results under a dated name (datedResultFile) and answers the file's path. */
export function writeResultFile(prefix: string, date: Date, report: string): string {
  const dir = join(REPO_ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = datedResultFile(dir, prefix, date);
  writeFileSync(file, report);
  return file;
}

/** An error in one line for a table cell or a note: its first line, and the underlying cause when there is one. */
export const firstLine = (e: unknown) => {
  const msg = (e as Error)?.message ?? String(e);
  const cause = msg.split('\n').find((l) => /\bError\b|ECONN|refused|timed out/i.test(l) && l !== msg.split('\n')[0]);
  return `${msg.split('\n')[0].replace(/:$/, '')}${cause ? `: ${cause.trim()}` : ''}`.slice(0, 200);
};
