/**
 * V8 CPU profiles of a process under test: recorded with the preloaded profile hook (no restart,
 * no --cpu-prof), and summarised as markdown (top self time by function, self and inclusive time
 * per module/package, callers of the biggest entries, project functions by inclusive time).
 */
import { existsSync, readFileSync, rmSync } from 'fs';
import { join, relative } from 'path';
import { REPO_ROOT } from './paths';
import { sleep } from './poll';
import { Proc } from './process';

/** Preload (`-r`) of a process that is to be profiled; it also needs `profileHookEnv(file)`. */
export const PROFILE_HOOK = './' + relative(REPO_ROOT, join(__dirname, 'profile-hook.ts'));

export const profileHookEnv = (file: string) => ({ BENCH_CPU_PROFILE_FILE: file });

export interface Profile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }; children?: number[] }>;
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * Records a CPU profile of `proc` (started with PROFILE_HOOK and profileHookEnv(file)) while
 * `during` runs: SIGWINCH starts the profiler, the next one stops it and the hook writes `file`.
 * Resolves with what `during` gave and the profile, or null when none was written.
 */
export async function captureProfile<T>(proc: Proc, file: string, during: () => Promise<T>): Promise<{ result: T; profile: Profile | null }> {
  rmSync(file, { force: true });
  process.kill(proc.pid, 'SIGWINCH');
  await sleep(500);
  const result = await during();
  process.kill(proc.pid, 'SIGWINCH');
  const deadline = Date.now() + 20_000;
  while (!existsSync(file) && Date.now() < deadline) await sleep(200);
  return { result, profile: existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Profile) : null };
}

function area(root: string, url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native / V8 builtins)';
  if (url.startsWith('node:')) return url.startsWith('node:internal/') ? `node:${url.slice('node:internal/'.length).split('/')[0]}` : url;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const path = url.startsWith('file://') ? url.slice(7) : url;
  return path.startsWith(root) ? relative(root, path) : path;
}

function location(root: string, url: string, line: number): string {
  if (!url) return '';
  const path = url.startsWith('file://') ? url.slice(7) : url;
  const nm = path.lastIndexOf('/node_modules/');
  const shown = nm >= 0 ? path.slice(nm + '/node_modules/'.length) : path.startsWith(root) ? relative(root, path) : path;
  return `${shown}:${line + 1}`;
}

/** Self time per function and per module/package, and time with a module on the stack (inclusive). */
export function summariseProfile(p: Profile, root = REPO_ROOT): string {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));

  const fnSelf = new Map<string, { name: string; where: string; area: string; us: number }>();
  const areaSelf = new Map<string, number>();
  const areaIncl = new Map<string, number>();
  const fnIncl = new Map<string, number>();
  let total = 0;
  let idle = 0;
  let profiler = 0;
  // Samples under the profile hook itself (Profiler.stop serialising the profile) are left out.
  const underProfiler = (id: number): boolean => {
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) if (byId.get(cur)!.callFrame.url.includes('profile-hook')) return true;
    return false;
  };
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const { functionName, url, lineNumber } = n.callFrame;
    const name = functionName || '(anonymous)';
    if (name === '(idle)') {
      idle += us;
      continue;
    }
    if (underProfiler(id)) {
      profiler += us;
      continue;
    }
    total += us;
    const a = area(root, url, name);
    const key = `${name}|${url}|${lineNumber}`;
    const f = fnSelf.get(key) ?? { name, where: location(root, url, lineNumber), area: a, us: 0 };
    f.us += us;
    fnSelf.set(key, f);
    areaSelf.set(a, (areaSelf.get(a) ?? 0) + us);
    // inclusive: every area / project function on this node's stack, counted once per sample
    const areas = new Set<string>();
    const fns = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const cf = byId.get(cur)!.callFrame;
      if (cf.functionName === '(root)') break;
      const ca = area(root, cf.url, cf.functionName || '(anonymous)');
      areas.add(ca);
      if (cf.url.includes('/libs/') || cf.url.includes('/apps/')) fns.add(`${cf.functionName || '(anonymous)'} (${location(root, cf.url, cf.lineNumber)})`);
    }
    for (const a2 of areas) areaIncl.set(a2, (areaIncl.get(a2) ?? 0) + us);
    for (const f2 of fns) fnIncl.set(f2, (fnIncl.get(f2) ?? 0) + us);
  }
  const pct = (us: number) => `${((us / total) * 100).toFixed(1)}%`;
  const ms = (us: number) => (us / 1000).toFixed(0);
  const lines: string[] = [];
  const gaps = [...p.timeDeltas].sort((a, b) => b - a);
  lines.push(
    `Profiled ${((p.endTime - p.startTime) / 1e6).toFixed(1)} s; busy ${ms(total)} ms, idle ${ms(idle)} ms (includes the ~0.5 s before the loader starts), profiler itself ${ms(profiler)} ms (left out). Percentages are of busy time. ` +
      `Longest gaps between samples (the process or its sampler not scheduled, i.e. machine noise): ${gaps
        .slice(0, 5)
        .map((g) => `${(g / 1000).toFixed(1)} ms`)
        .join(', ')}.`,
    '',
  );
  lines.push('Top self time by function:', '', '| # | function | where | module | self ms | self % |', '|---|---|---|---|---:|---:|');
  [...fnSelf.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, 25)
    .forEach((f, i) => lines.push(`| ${i + 1} | \`${f.name}\` | ${f.where || '—'} | ${f.area} | ${ms(f.us)} | ${pct(f.us)} |`));
  lines.push(
    '',
    'Self time by module / package, and share of samples with it anywhere on the stack (inclusive):',
    '',
    '| module | self % | inclusive % |',
    '|---|---:|---:|',
  );
  [...areaSelf.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 20)
    .forEach(([a, us]) => lines.push(`| ${a} | ${pct(us)} | ${pct(areaIncl.get(a) ?? us)} |`));
  const heavyIncl = [...areaIncl.entries()]
    .filter(([a]) => !areaSelf.has(a) || (areaSelf.get(a) ?? 0) < (areaIncl.get(a) ?? 0) * 0.5)
    .sort((a, b) => b[1] - a[1]);
  if (heavyIncl.length) {
    lines.push('', 'Modules that are mostly on the stack rather than in self time (callers of the cost):', '', '| module | inclusive % |', '|---|---:|');
    heavyIncl.slice(0, 12).forEach(([a, us]) => lines.push(`| ${a} | ${pct(us)} |`));
  }
  // Who calls the biggest self-time entries (e.g. which module issues the socket writes).
  const top = [...fnSelf.entries()]
    .sort((a, b) => b[1].us - a[1].us)
    .filter(([, f]) => !f.name.startsWith('('))
    .slice(0, 6);
  lines.push('', 'Callers of the biggest self-time entries (first frames up the stack, by share of that entry):', '');
  for (const [key, f] of top) {
    const chains = new Map<string, number>();
    for (const [id, us] of self) {
      const cf = byId.get(id)!.callFrame;
      if (`${cf.functionName || '(anonymous)'}|${cf.url}|${cf.lineNumber}` !== key) continue;
      // the direct caller, then the first frame outside node's own internals (who started it)
      const chain: string[] = [];
      let origin = '';
      for (let cur = parent.get(id); cur !== undefined; cur = parent.get(cur)) {
        const c = byId.get(cur)!.callFrame;
        if (c.functionName === '(root)') break;
        const frame = `${c.functionName || '(anonymous)'} (${location(root, c.url, c.lineNumber) || 'native'})`;
        if (!chain.length) chain.push(frame);
        if (c.url && !c.url.startsWith('node:')) {
          origin = frame;
          break;
        }
      }
      if (origin && origin !== chain[0]) chain.push(`… ${origin}`);
      const k = chain.join(' ← ');
      chains.set(k, (chains.get(k) ?? 0) + us);
    }
    const best = [...chains.entries()].sort((a, b) => b[1] - a[1]).slice(0, 2);
    lines.push(
      `- \`${f.name}\` (${pct(f.us)}${f.where ? `, ${f.where}` : ''}): ${best.map(([c, us]) => `${((us / f.us) * 100).toFixed(0)}% ← ${c || '(top level)'}`).join('; ')}`,
    );
  }
  lines.push('', 'Project functions (libs/, apps/) by inclusive time:', '', '| function | inclusive % |', '|---|---:|');
  [...fnIncl.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 20)
    .forEach(([f, us]) => lines.push(`| \`${f}\` | ${pct(us)} |`));
  return lines.join('\n');
}
