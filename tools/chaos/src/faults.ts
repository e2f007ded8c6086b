/**
 * The faults of a chaos run, on the stack of the environment (STACK_SCRIPT, STACK_PIDS_DIR) and on
 * the app instances the run started: SIGKILL then the stack script's per-service start (or the app
 * started again on its ports), or SIGSTOP then SIGCONT; on the links between the apps and the servers
 * (network.ts); and on the machine (a CPU hog). Whatever is still down, hung, slowed or cut when the
 * run ends is brought back by `restoreAll`.
 */
import { App, eventually, sleep, startApp } from '@shortlink/harness';
import { clusterNodes, nodeCommand, Outages, redisNodePid, stackPid } from '../../../test/resilience/support';
import { CpuHog, LinkName, NetworkFaults } from './network';
import { PlannedFault } from './schedule';
import { Fault } from './record';

type StackServer = 'mysql-a' | 'mysql-b' | 'kafka' | 'clickhouse';
const COMMAND_LINE: Record<StackServer, RegExp> = { 'mysql-a': /mariadbd|mysqld/, 'mysql-b': /mariadbd|mysqld/, kafka: /kafka/i, clickhouse: /clickhouse/ };

/** The PID of a stack server (never signal a PID that was reused). */
const serverPid = (name: StackServer): number => stackPid(name, (cmdline) => COMMAND_LINE[name].test(cmdline));

export interface Instances {
  generation: App[];
  redirect: App[];
  analytics: App[];
  /** The environment every app of the run starts with. */
  env: Record<string, string>;
}

export class FaultInjector {
  private readonly outages = new Outages();
  private readonly paused = new Set<number>();
  private readonly appsDown = new Map<string, { kind: 'generation' | 'redirect' | 'analytics'; index: number; old: App }>();
  private readonly hog = new CpuHog();

  constructor(
    private readonly apps: Instances,
    /** The run's proxies between the apps and MariaDB and ClickHouse. */
    private readonly network: NetworkFaults,
    /** Called with an app's instance before it is killed (to read its metrics a last time) and after it is back. */
    private readonly hooks: {
      beforeKill?: (name: string, app: App) => Promise<void>;
      started?: (name: string, app: App) => void;
      unflushed?: () => Promise<number>;
      /** Tells the clients to start (true, until the window's end) or end (false) their flood loops. */
      flood?: (on: boolean, until?: number) => void;
      log?: (msg: string) => void;
    } = {},
  ) {}

  static instanceName = (kind: string, index: number) => `${kind}-${index}`;

  /** Runs one planned fault: down for its time, then back; resolves with what happened. */
  async inject(plan: PlannedFault): Promise<Fault> {
    const unflushedClicksBefore = plan.target === 'redis-master' ? await this.hooks.unflushed?.().catch(() => undefined) : undefined;
    const base = { target: plan.target, action: plan.action, downMs: plan.downMs, unflushedClicksBefore };
    let victim = plan.target as string;
    let start = Date.now();
    try {
      switch (plan.target) {
        case 'redis-master': {
          const masters = (await clusterNodes()).filter((n) => n.flags.includes('master') && !n.flags.includes('fail') && n.slots.length > 0);
          const port = masters[plan.pick % masters.length].port;
          victim = `redis-node-${port}`;
          const pid = redisNodePid(port);
          start = Date.now();
          await this.signalled(
            pid,
            plan,
            () => this.outages.killed(`redis-node-${port}`),
            () => this.outages.start(`redis-node-${port}`),
          );
          await eventually(
            `${victim} in a healthy cluster`,
            async () => /cluster_state:ok/.test((await nodeCommand(port, 'CLUSTER', 'INFO')) ?? ''),
            60_000,
            200,
          );
          break;
        }
        case 'mariadb':
        case 'kafka':
        case 'clickhouse': {
          const server: StackServer = plan.target === 'mariadb' ? (['mysql-a', 'mysql-b'] as const)[plan.pick % 2] : plan.target;
          victim = server;
          const pid = serverPid(server);
          start = Date.now();
          await this.signalled(
            pid,
            plan,
            () => this.outages.killed(server),
            () => this.outages.start(server),
          );
          break;
        }
        case 'mariadb-link':
        case 'clickhouse-link': {
          const link: LinkName = plan.target === 'clickhouse-link' ? 'clickhouse' : (['mariadb-a', 'mariadb-b'] as const)[plan.pick % 2];
          victim = link;
          start = Date.now();
          try {
            await (plan.action === 'cut' ? this.network.cut(link) : this.network.slow(link));
            await sleep(plan.downMs);
          } finally {
            await this.network.heal(link);
          }
          break;
        }
        case 'flood': {
          victim = 'every app';
          start = Date.now();
          this.hooks.flood?.(true, start + plan.downMs);
          try {
            await sleep(plan.downMs);
          } finally {
            this.hooks.flood?.(false);
          }
          break;
        }
        case 'cpu': {
          victim = 'both cores';
          start = Date.now();
          this.hog.start(plan.downMs);
          await sleep(plan.downMs);
          await this.hog.stop();
          break;
        }
        default: {
          const kind = plan.target;
          const index = plan.pick % this.apps[kind].length;
          victim = FaultInjector.instanceName(kind, index);
          const app = this.apps[kind][index];
          if (plan.action === 'kill') await this.hooks.beforeKill?.(victim, app);
          start = Date.now();
          await this.signalled(
            app.proc.pid,
            plan,
            () => this.appsDown.set(victim, { kind, index, old: app }),
            async () => {
              await app.proc.exited;
              await this.restartApp(victim);
            },
          );
        }
      }
      return { ...base, victim, start, end: Date.now() };
    } catch (e) {
      return { ...base, victim, start, end: Date.now(), error: (e as Error).message };
    }
  }

  /** SIGKILL, the down time, then `restart`; or SIGSTOP, the down time, then SIGCONT. */
  private async signalled(pid: number, plan: PlannedFault, killed: () => void, restart: () => Promise<void>): Promise<void> {
    if (plan.action === 'kill') {
      process.kill(pid, 'SIGKILL');
      killed();
      await sleep(plan.downMs);
      await restart();
    } else {
      process.kill(pid, 'SIGSTOP');
      this.paused.add(pid);
      await sleep(plan.downMs);
      process.kill(pid, 'SIGCONT');
      this.paused.delete(pid);
    }
  }

  /** Starts a killed app again on its ports; a boot can take a minute and more on a loaded machine, so it gets three tries. */
  private async restartApp(name: string): Promise<void> {
    const down = this.appsDown.get(name)!;
    let app: App | undefined;
    for (let attempt = 1; !app; attempt++) {
      try {
        app = await startApp(down.kind, this.apps.env, { portsOf: down.old, timeoutMs: 120_000 });
      } catch (e) {
        if (attempt >= 3) throw e;
        this.hooks.log?.(`${name} did not come up (try ${attempt} of 3): ${(e as Error).message}`);
      }
    }
    this.apps[down.kind][down.index] = app;
    this.appsDown.delete(name);
    this.hooks.started?.(name, app);
  }

  /** Everything still hung or down is brought back (after a failure or an interrupted run). */
  async restoreAll(): Promise<void> {
    this.hooks.flood?.(false);
    await this.hog.stop();
    await this.network.healAll();
    for (const pid of this.paused) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // gone
      }
    }
    this.paused.clear();
    for (const name of [...this.appsDown.keys()]) await this.restartApp(name).catch(() => undefined);
    await this.outages.restoreAll();
  }
}
