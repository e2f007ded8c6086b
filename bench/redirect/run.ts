/**
 * Redirect hot-path benchmark (on demand, never in CI):
 *
 *   node -r ./tools/register.js bench/redirect/run.ts [--quick] [--duration=10] [--warmup=3] [--runs=3]
 *        [--connections=100] [--codes=1000] [--cases=l1-embedded,l1-kafka,...] [--profile=auto|always|never]
 *        [--loader=wrk|autocannon] [--budget=1500] [--wait-stack=0] [--latency-rates=2000|none] [--env=K=V,...]
 *
 * 127.0.0.1 only; method, cases and output in README.md. This file only wires the parts: the
 * command line (cli.ts), the invocation's context (context.ts), the cases (cases.ts, measured by
 * measure.ts on the servers of servers.ts) and the result file (report.ts); the bench-independent
 * parts (processes, load generators, CPU, profiles, report helpers) are in @shortlink/harness.
 * Every process started here is stopped by PID at the end (SIGTERM, then SIGKILL), also on
 * failure, Ctrl-C or when the watchdog fires at budget + 3 min.
 */
import { parseOptions } from './cli';
import { BenchContext, createContext, releaseProcesses } from './context';
import { runCases } from './cases';
import { deleteBenchTopic } from './kafka';
import { writeReport } from './report';

async function bench(ctx: BenchContext): Promise<void> {
  const { bare, stackAtStart } = await runCases(ctx);
  writeReport(ctx, bare, stackAtStart);
}

async function main(): Promise<number> {
  const opts = parseOptions(process.argv.slice(2));
  const ctx = createContext(opts);
  let cleaning: Promise<void> | null = null;
  const cleanup = () => (cleaning ??= releaseProcesses(ctx).then(() => deleteBenchTopic(ctx)));
  const stopAndExit = (why: string, code: number) => {
    ctx.log(why);
    void cleanup().finally(() => process.exit(code));
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, () => stopAndExit(`${sig}: stopping everything`, 130));
  // Hard stop: whatever happens, nothing outlives budget + 3 min.
  const watchdog = setTimeout(() => stopAndExit('watchdog: over the time budget, stopping everything', 3), (opts.budgetSeconds + 180) * 1000);
  try {
    await bench(ctx);
    return 0;
  } catch (e) {
    ctx.log(`failed: ${(e as Error).stack ?? e}`);
    return 1;
  } finally {
    await cleanup();
    clearTimeout(watchdog);
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`[bench] ${(e as Error).message}\n`);
    process.exit(2);
  },
);
