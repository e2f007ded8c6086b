import 'reflect-metadata';
import { SingleBar } from 'cli-progress';
import { ConfigError, loadConfig } from '@shortlink/config';
import { describeSpec, MoveProgress, ReshardError, Resharder, ReshardPlan, ReshardReporter, ReshardStatus, RingChange } from '@shortlink/sharding-domain';
import { ringStoreFor, ShardCatalog } from '@shortlink/wiring';

const USAGE = `npm run reshard -- <command> [options]   (docs/design.md, "Online resharding")

  plan   --add s4 [--add s5=2] [--remove s3] [--weight s1=2] [--strategy ring|jump] [--virtual-nodes N]
         how many links would move from where to where (a dry run)
  run    <the same change> --yes        start a move and drive it to the end
  run    --yes                          resume the unfinished move (after a crash or a kill)
  status                                the ring, its versions, the move, the app instances and their versions
  abort  --yes                          stop the unfinished move and put the ring back (before its switch)

  --rate N      moving rows copied (and old rows deleted) per second at most (default 2000; 0: unbounded)
  --batch N     rows per batch (default 500)
  --json        machine-readable output (plan, run, status)

The shards a change names must be configured: MYSQL_SHARDS or MYSQL_SPARE_SHARDS on the server
profile; on the embedded profile any name is a SQLite file under <data dir>/shards.`;

class UsageError extends Error {}

interface Args {
  command: string;
  change: RingChange;
  yes: boolean;
  json: boolean;
  rate: number;
  batch: number;
}

function parseArgs(argv: string[]): Args {
  const [command, ...rest] = argv;
  if (!command || !['plan', 'run', 'status', 'abort'].includes(command))
    throw new UsageError(command ? `unknown command "${command}"` : 'a command is required');
  const add: Array<{ name: string; weight?: number }> = [];
  const remove: string[] = [];
  const weights: Record<string, number> = {};
  let strategy: 'ring' | 'jump' | undefined;
  let virtualNodes: number | undefined;
  let yes = false;
  let json = false;
  let rate = 2000;
  let batch = 500;
  const number = (flag: string, v: string | undefined, min: number) => {
    const n = Number(v);
    if (v === undefined || !Number.isInteger(n) || n < min) throw new UsageError(`${flag} needs an integer >= ${min}`);
    return n;
  };
  const named = (flag: string, v: string | undefined) => {
    if (!v) throw new UsageError(`${flag} needs a shard name`);
    const [name, w] = v.split('=');
    const weight = w === undefined ? undefined : Number(w);
    if (weight !== undefined && !(weight > 0)) throw new UsageError(`${flag} ${v}: the weight must be a positive number`);
    return { name, weight };
  };
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i];
    const value = () => rest[++i];
    switch (flag) {
      case '--add':
        add.push(named(flag, value()));
        break;
      case '--remove':
        remove.push(named(flag, value()).name);
        break;
      case '--weight': {
        const { name, weight } = named(flag, value());
        if (weight === undefined) throw new UsageError('--weight needs name=weight');
        weights[name] = weight;
        break;
      }
      case '--strategy': {
        const v = value();
        if (v !== 'ring' && v !== 'jump') throw new UsageError('--strategy is ring or jump');
        strategy = v;
        break;
      }
      case '--virtual-nodes':
        virtualNodes = number(flag, value(), 1);
        break;
      case '--rate':
        rate = number(flag, value(), 0);
        break;
      case '--batch':
        batch = number(flag, value(), 1);
        break;
      case '--yes':
        yes = true;
        break;
      case '--json':
        json = true;
        break;
      default:
        throw new UsageError(`unknown option "${flag}"`);
    }
  }
  const change: RingChange = { add, remove, weights, strategy, virtualNodes };
  return { command, change, yes, json, rate, batch };
}

const hasChange = (c: RingChange) => Boolean(c.add?.length || c.remove?.length || Object.keys(c.weights ?? {}).length || c.strategy || c.virtualNodes);

function printPlan(plan: ReshardPlan): void {
  const pct = (n: number) => `${(n * 100).toFixed(1)} %`;
  console.log(`from  ${describeSpec(plan.from)}\nto    ${describeSpec(plan.to)}\n`);
  console.log(`${plan.moving} of ${plan.examined} links move (${pct(plan.share)})`);
  for (const [flow, n] of Object.entries(plan.flows).sort()) console.log(`  ${flow.padEnd(14)} ${String(n).padStart(9)}`);
  const shards = [...new Set([...Object.keys(plan.before), ...Object.keys(plan.after)])];
  console.log(`\n  ${'shard'.padEnd(10)} ${'before'.padStart(9)} ${'after'.padStart(9)}`);
  for (const s of shards) console.log(`  ${s.padEnd(10)} ${String(plan.before[s] ?? '-').padStart(9)} ${String(plan.after[s] ?? '-').padStart(9)}`);
  console.log(`  ${'stddev'.padEnd(10)} ${plan.stddevBefore.toFixed(1).padStart(9)} ${plan.stddevAfter.toFixed(1).padStart(9)}`);
}

function printStatus(s: ReshardStatus): void {
  console.log(
    s.ring
      ? `ring version ${s.ring.version}: ${describeSpec(s.ring.spec)}${s.ring.move ? `\n  move ${s.ring.move.id}: ${s.ring.move.phase} → ${describeSpec(s.ring.move.to)}` : ''}`
      : 'no ring yet',
  );
  console.log(`\nversions: ${s.history.map((v) => `v${v.version}${v.move ? `(${v.move.phase})` : ''}`).join(' ')}`);
  if (s.move) {
    const p = s.move.progress;
    console.log(`\nmove ${p.id} (${s.move.finished ? 'finished' : 'unfinished'}): ${p.description}`);
    console.log(
      `  step ${p.step}; ${p.copied} copied, ${p.skipped} already there, ${p.repaired} repaired, ${p.cleaned} cleaned up of ${p.plan.moving} moving (${p.plan.examined} links)`,
    );
    if (p.error) console.log(`  last error: ${p.error}`);
    if (s.move.owner) console.log(`  held by ${s.move.owner}, ${s.move.ownerAgeMs === null ? '?' : Math.round(s.move.ownerAgeMs / 1000)} s ago`);
    console.log(`  timings (ms): ${JSON.stringify(p.timings)}`);
    if (p.freeze)
      console.log(
        `  freeze: writes of moving links held ${p.freeze.heldMs === null ? '(still)' : `${p.freeze.heldMs} ms`}; ${p.freeze.journaled} links written since verify began compared in ${p.freeze.compareMs} ms (${p.freeze.rowsRead} rows read)`,
      );
    if (p.verify?.length) console.log('  compared while frozen (the links written since verify began, per flow):');
    for (const f of p.verify ?? [])
      console.log(
        `  verified ${`${f.from}->${f.to}`.padEnd(12)} source ${f.sourceRows} rows ${f.sourceChecksum}  target ${f.targetRows} rows ${f.targetChecksum}`,
      );
  }
  console.log(`\napp instances (${s.watchers.length}):`);
  for (const w of s.watchers) console.log(`  ${w.instanceId.padEnd(48)} ${w.app.padEnd(12)} v${w.version}  seen ${Math.round(w.ageMs)} ms ago`);
}

/** A progress bar on a terminal; a line every 2 s otherwise (logs, tests). */
function reporter(json: boolean): ReshardReporter & { stop(): void } {
  let bar: SingleBar | null = null;
  let started = 0;
  let first = 0;
  const log = (line: string) => (json ? process.stderr : process.stdout).write(`${line}\n`);
  return {
    step: (step, detail) => {
      bar?.stop();
      bar = null;
      log(`[${new Date().toISOString()}] ${step}: ${detail}`);
    },
    note: (message) => log(`  ${message}`),
    copy: (done, total) => {
      if (!bar) {
        started = Date.now();
        first = done;
        bar = new SingleBar({
          format: '  copy |{bar}| {percentage}% {value}/{total} rows | {speed} rows/s | ETA {eta_formatted}',
          noTTYOutput: true,
          notTTYSchedule: 2000,
          stream: json ? process.stderr : process.stdout,
          etaBuffer: 50,
        });
        bar.start(Math.max(total, done), done, { speed: 0 });
      }
      const seconds = (Date.now() - started) / 1000;
      bar.setTotal(Math.max(total, done));
      bar.update(done, { speed: seconds > 0 ? Math.round((done - first) / seconds) : 0 });
    },
    stop: () => bar?.stop(),
  };
}

async function main(): Promise<number> {
  let args: Args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const config = loadConfig(process.env);
  const catalog = new ShardCatalog(config);
  const ring = ringStoreFor(config);
  const report = reporter(args.json);
  const tool = new Resharder(ring, (name) => catalog.get(name), {
    batchSize: args.batch,
    ratePerSecond: args.rate,
    watcherAliveMs: config.db.ring.leaseMs + 5000,
    ackTimeoutMs: Math.max(60_000, 6 * config.db.ring.leaseMs),
    reporter: report,
  });
  const out = (value: unknown) => console.log(JSON.stringify(value, null, 2));
  try {
    switch (args.command) {
      case 'status': {
        const status = await tool.status();
        if (args.json) out(status);
        else printStatus(status);
        return 0;
      }
      case 'plan': {
        if (!hasChange(args.change)) throw new UsageError('plan needs a change (--add, --remove, --weight, --strategy, --virtual-nodes)');
        const plan = await tool.plan(args.change);
        if (args.json) out(plan);
        else printPlan(plan);
        return 0;
      }
      case 'run': {
        const change = hasChange(args.change) ? args.change : undefined;
        if (!args.yes) {
          if (change) printPlan(await tool.plan(change));
          console.log(`\nnothing changed: add --yes to ${change ? 'start the move' : 'resume the unfinished move'}`);
          return 2;
        }
        const done: MoveProgress = await tool.run(change);
        report.stop();
        if (args.json) out(done);
        else printStatus(await tool.status());
        return 0;
      }
      case 'abort': {
        if (!args.yes) {
          console.log('add --yes to abort the unfinished move');
          return 2;
        }
        const aborted = await tool.abort();
        if (args.json) out(aborted);
        else console.log(`move ${aborted.id} aborted; ring back to ${describeSpec(aborted.from)}`);
        return 0;
      }
    }
    return 2;
  } catch (error) {
    report.stop();
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${USAGE}`);
      return 2;
    }
    console.error(error instanceof ReshardError || (error as Error).name === 'ShardRouterError' ? `reshard: ${(error as Error).message}` : error);
    return 1;
  } finally {
    await catalog.closeAll().catch(() => undefined);
    await ring.close().catch(() => undefined);
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error instanceof ConfigError ? error.message : error);
    process.exit(1);
  },
);
