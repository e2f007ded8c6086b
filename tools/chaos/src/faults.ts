/**
 * The faults of a chaos run, on the stack of the environment (STACK_SCRIPT, STACK_PIDS_DIR) and on
 * the app instances the run started: SIGKILL then the stack script's per-service start (or the app
 * started again on its ports), or SIGSTOP then SIGCONT; on the links between the apps and the servers
 * (network.ts); and on the machine (a CPU hog). Whatever is still down, hung, slowed or cut when the
 * run ends is brought back by `restoreAll`.
 */
import { Redis } from 'ioredis';
import { App, eventually, sleep, startApp } from '@shortlink/harness';
import { requireEnv } from '@shortlink/testing';
import { clusterNodes, nodeCommand, Outages, redisNodePid, stackPid } from '../../../test/resilience/support';
import { CpuHog, LinkName, NetworkFaults } from './network';
import { Partitions } from './partition';
import { isRedisFault, PlannedFault } from './schedule';
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
    /** The run's cuts between processes (a Redis master from the rest of the cluster, Kafka from one redirect). */
    private readonly partitions: Partitions,
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
    const unflushedClicksBefore = isRedisFault(plan.target) ? await this.hooks.unflushed?.().catch(() => undefined) : undefined;
    const base = { target: plan.target, action: plan.action, downMs: plan.downMs, unflushedClicksBefore };
    let victim = plan.target as string;
    let start = Date.now();
    let note: string | undefined;
    /** When the fault ended, if before the component was healthy again (a partition ends when the rules are gone). */
    let end: number | undefined;
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
        case 'redis-partition': {
          const r = await this.redisPartition(plan, (v) => (victim = v));
          [start, end, note] = [r.start, r.end, r.note];
          break;
        }
        case 'kafka-link': {
          // Kafka unreachable from one redirect instance only: the others, the generation apps and the consumer still reach it.
          const index = plan.pick % this.apps.redirect.length;
          victim = FaultInjector.instanceName('redirect', index);
          const brokerPorts = requireEnv('KAFKA_BROKERS')
            .split(',')
            .map((b) => Number(b.split(':').pop()));
          const cut = await this.partitions.cut({ pids: [this.apps.redirect[index].proc.pid], ports: [] }, { pids: [serverPid('kafka')], ports: brokerPorts });
          start = cut.at;
          try {
            await sleep(plan.downMs);
          } finally {
            end = await this.partitions.heal(cut);
          }
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
      return { ...base, victim, start, end: end ?? Date.now(), ...(note ? { note } : {}) };
    } catch (e) {
      return { ...base, victim, start, end: Date.now(), ...(note ? { note } : {}), error: (e as Error).message };
    }
  }

  /**
   * A Redis master cut off from its replica and every other node (partition.ts), while the apps (and
   * this run) still reach it: the majority marks it failed and its replica takes over, while the old
   * master still answers the clients that reach it until it sees itself in the minority (cluster-node-timeout).
   * The cut lasts the planned time and at least until a replica took over (≤ 20 s); healed, the old
   * master rejoins as a replica of the new one and its writes of the partition are gone. The note says
   * what the old master answered to a write just after the cut and at the takeover.
   */
  private async redisPartition(plan: PlannedFault, named: (victim: string) => void): Promise<{ start: number; end: number; note: string }> {
    const nodes = (await clusterNodes()).filter((n) => !n.flags.includes('fail') && !n.flags.includes('noaddr'));
    const masters = nodes.filter((n) => n.flags.includes('master') && n.slots.length > 0);
    const master = masters[plan.pick % masters.length];
    const replicas = nodes.filter((n) => n.masterId === master.id);
    const others = nodes.filter((n) => n.id !== master.id);
    const victim = `redis-node-${master.port}`;
    named(victim);
    // A client of the run's own that keeps reaching the old master: its answers to a write go into the note.
    const client = new Redis({ host: '127.0.0.1', port: master.port, lazyConnect: true, connectTimeout: 1000, commandTimeout: 1000, maxRetriesPerRequest: 0 });
    client.on('error', () => undefined);
    await client.connect();
    let key = '';
    for (let i = 0; !key && i < 5000; i++) {
      const slot = Number(await client.cluster('KEYSLOT', `chaos:probe:${i}`));
      if (master.slots.some(([a, b]) => slot >= a && slot <= b)) key = `chaos:probe:${i}`;
    }
    const probe = () => client.set(key, String(Date.now())).then(String, (e: Error) => e.message.split('\n')[0]);
    const cut = await this.partitions.cut(
      { pids: [redisNodePid(master.port)], ports: [master.port, master.port + 10_000] },
      { pids: others.map((n) => redisNodePid(n.port)), ports: others.flatMap((n) => [n.port, n.port + 10_000]) },
    );
    const start = cut.at;
    let note = '';
    try {
      await sleep(300);
      note = `old master's answer to a write at +0.3 s: ${await probe()}`;
      await sleep(Math.max(0, plan.downMs - (Date.now() - start)));
      const tookOver = async () => {
        for (const r of replicas) if ((await nodeCommand(r.port, 'ROLE'))?.startsWith('master')) return r.port;
        return undefined;
      };
      let by: number | undefined;
      await eventually(`a replica of ${victim} to take over`, async () => (by = await tookOver()) !== undefined, 20_000, 100);
      note += `; replica ${by} took over by +${((Date.now() - start) / 1000).toFixed(1)} s, when the old master answered: ${await probe()}`;
    } finally {
      await this.partitions.heal(cut);
      client.disconnect();
    }
    // Back: the old master sees a healthy cluster again (a replica of the new master by now).
    await eventually(
      `${victim} back in a healthy cluster`,
      async () => /cluster_state:ok/.test((await nodeCommand(master.port, 'CLUSTER', 'INFO')) ?? ''),
      60_000,
      200,
    );
    return { start, end: Date.now(), note };
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
    await this.partitions.healAll();
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
