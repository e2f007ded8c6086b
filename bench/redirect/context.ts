/**
 * One invocation of the bench: its options, clock, scratch directory, the processes it started,
 * the keys every app process shares, and what it has measured so far. Passed to every part of the
 * bench instead of module-level state.
 */
import { randomBytes } from 'crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { findVegeta, loadAverages, LoadRig, ProcessGroup, REPO_ROOT, serverSecrets } from '@shortlink/harness';
import { CaseId, labelOf, Options } from './cli';
import type { CaseResult, Skipped } from './measure';

export const RESULTS_DIR = join(REPO_ROOT, 'bench', 'results');
export const PROFILES_DIR = join(RESULTS_DIR, 'profiles');
/** The server under test runs on this core, the loaders on the other. */
export const SERVER_CORE = '0';
export const LOADER_CORE = '1';
export const DOMAIN = 'bench.shortlink.test';

export interface ProfileSummary {
  caseId: string;
  file: string;
  rps: number;
  text: string;
}

export interface BenchContext {
  readonly opts: Options;
  readonly t0: number;
  /** The start time, for file names. */
  readonly stamp: string;
  readonly startLoad: string;
  readonly log: (msg: string) => void;
  readonly tmpDir: string;
  readonly group: ProcessGroup;
  /** Where the loaders run: pinned to the loader core, registered in `group`. */
  readonly rig: LoadRig;
  /** The server profile's keys, one pair per invocation, shared by every app process. */
  readonly secrets: Record<string, string>;
  /** SHORTLINK_BOOTSTRAP_API_KEY of every app process (BENCH_API_KEY, else generated). */
  readonly apiKey: string;
  /** The click topic of the Kafka-bus cases (created on first use, deleted at the end; `brokers` once created). */
  readonly kafka: { topic: string; brokers: string[] | null };
  inBudget(): boolean;
  /** vegeta's path (looked up, or installed, once), or null. */
  vegeta(): string | null;
  readonly results: Array<CaseResult | Skipped>;
  readonly notes: string[];
  readonly profiles: ProfileSummary[];
}

export function createContext(opts: Options, t0 = Date.now()): BenchContext {
  const log = (msg: string) => process.stderr.write(`[bench ${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${msg}\n`);
  const group = new ProcessGroup({ graceMs: 8_000, log });
  const tmpDir = mkdtempSync(join(tmpdir(), 'shortlink-bench-'));
  mkdirSync(PROFILES_DIR, { recursive: true });
  let vegeta: string | null | undefined;
  return {
    opts,
    t0,
    stamp: new Date(t0).toISOString().replace(/[:.]/g, '-').slice(0, 19),
    startLoad: loadAverages(),
    log,
    tmpDir,
    group,
    rig: { tmpDir, group, core: LOADER_CORE },
    secrets: serverSecrets(),
    apiKey: process.env.BENCH_API_KEY || `sl_bench_${randomBytes(20).toString('hex')}`,
    kafka: { topic: `shortlink.clicks.bench.${t0.toString(36)}`, brokers: null },
    inBudget: () => Date.now() < t0 + opts.budgetSeconds * 1000,
    vegeta: () => (vegeta === undefined ? (vegeta = findVegeta(log)) : vegeta),
    results: [],
    notes: [],
    profiles: [],
  };
}

/** Records cases as not measured, with the reason. */
export function skip(ctx: BenchContext, ids: readonly CaseId[], reason: string): void {
  for (const id of ids) ctx.results.push({ id, label: labelOf(id, ctx.opts), reason });
}

/** Stops every process the bench started and removes its scratch directory. */
export async function releaseProcesses(ctx: BenchContext): Promise<void> {
  await ctx.group.stopAll();
  rmSync(ctx.tmpDir, { recursive: true, force: true });
}
