/**
 * The chaos run's network and machine faults (docs/reliability.md, "Faults"): a Toxiproxy server of
 * the run's own between the apps and each MariaDB server and ClickHouse, whose links are slowed or
 * cut; and a CPU hog on both cores (stress-ng). The run's own reads (the checker's read-back) go to
 * the servers directly.
 */
import { ChildProcess, spawn } from 'child_process';
import { existsSync } from 'fs';
import { join } from 'path';
import { Proxy, Toxiproxy } from 'toxiproxy-node-client';
import { eventually, REPO_ROOT } from '@shortlink/harness';

export const TOXIPROXY_SERVER = join(REPO_ROOT, 'tools', '.bin', 'toxiproxy-server');

/** A link the run can slow or cut: its name and the server's host:port. */
export type LinkName = 'mariadb-a' | 'mariadb-b' | 'clickhouse';

/**
 * How a slowed link behaves. MariaDB: 200 ms each way with 50 ms jitter, and 5 % of connections reset
 * after 2 s (Toxiproxy works on TCP streams, where a lost packet shows as delay and, past the
 * retransmissions, a broken connection). ClickHouse: answers 2 s late.
 */
const SLOW: Record<LinkName, Array<{ type: 'latency' | 'reset_peer'; stream: 'upstream' | 'downstream'; toxicity: number; attributes: object }>> = {
  'mariadb-a': [],
  'mariadb-b': [],
  clickhouse: [{ type: 'latency', stream: 'downstream', toxicity: 1, attributes: { latency: 2000, jitter: 0 } }],
};
SLOW['mariadb-a'] = SLOW['mariadb-b'] = [
  { type: 'latency', stream: 'upstream', toxicity: 1, attributes: { latency: 200, jitter: 50 } },
  { type: 'latency', stream: 'downstream', toxicity: 1, attributes: { latency: 200, jitter: 50 } },
  { type: 'reset_peer', stream: 'downstream', toxicity: 0.05, attributes: { timeout: 2000 } },
];

/** The servers' settings of the stack (stack.env), which the proxies stand in front of. */
export interface ServerSettings {
  MYSQL_SHARDS: string;
  MYSQL_META_URL: string;
  MYSQL_SPARE_SHARDS?: string;
  CLICKHOUSE_URL: string;
}

const hostPort = (url: string) => new URL(url.replace(/^mysql:/, 'http:')).host;

export class NetworkFaults {
  private server?: ChildProcess;
  private client?: Toxiproxy;
  private readonly proxies = new Map<LinkName, Proxy>();

  /** Starts the run's Toxiproxy on `port` (tools/ci/install-chaos-tools.sh builds it). */
  async start(port: number): Promise<void> {
    if (!existsSync(TOXIPROXY_SERVER)) throw new Error(`${TOXIPROXY_SERVER} is missing: run 'bash tools/ci/install-chaos-tools.sh'`);
    this.server = spawn(TOXIPROXY_SERVER, ['-host', '127.0.0.1', '-port', String(port)], { stdio: 'ignore' });
    const client = new Toxiproxy(`http://127.0.0.1:${port}`);
    await eventually('toxiproxy to answer', async () => (await client.getVersion()) !== undefined, 10_000, 100);
    this.client = client;
  }

  /**
   * The apps' environment with their MariaDB and ClickHouse connections through the proxies (one per
   * server: both shards of a server share its link, as they share its network in production).
   */
  async route(env: Record<string, string>, servers: ServerSettings): Promise<Record<string, string>> {
    const mysqlUrls = [servers.MYSQL_SHARDS, servers.MYSQL_META_URL, servers.MYSQL_SPARE_SHARDS ?? ''].join(',');
    const mysqlServers = [...new Set(mysqlUrls.match(/mysql:\/\/[^,]+/g)!.map(hostPort))].sort();
    if (mysqlServers.length > 2) throw new Error(`the run proxies two MariaDB servers and the stack has ${mysqlServers.length}`);
    const through = new Map<string, string>();
    for (const [i, upstream] of mysqlServers.entries()) through.set(upstream, await this.proxy((['mariadb-a', 'mariadb-b'] as const)[i], upstream));
    const clickhouse = hostPort(servers.CLICKHOUSE_URL);
    through.set(clickhouse, await this.proxy('clickhouse', clickhouse));
    const rewrite = (value: string) => value.replace(/(?<=:\/\/(?:[^@/]*@)?)[^/@,]+:\d+/g, (hp) => through.get(hp) ?? hp);
    const routed = Object.fromEntries(Object.entries(servers).map(([k, v]) => [k, rewrite(v!)]));
    return { ...env, ...routed };
  }

  private async proxy(name: LinkName, upstream: string): Promise<string> {
    const proxy = await this.client!.createProxy({ name, listen: '127.0.0.1:0', upstream });
    this.proxies.set(name, proxy);
    return proxy.listen;
  }

  /** Slows the link (SLOW). */
  async slow(name: LinkName): Promise<void> {
    const proxy = this.proxies.get(name)!;
    for (const [i, toxic] of SLOW[name].entries()) await proxy.addToxic({ name: `slow-${i}`, ...toxic });
  }

  /** Cuts the link: the proxy closes every connection and refuses new ones. */
  async cut(name: LinkName): Promise<void> {
    const proxy = this.proxies.get(name)!;
    await proxy.update({ enabled: false, listen: proxy.listen, upstream: proxy.upstream });
  }

  /** The link as it was: enabled, no toxics. */
  async heal(name: LinkName): Promise<void> {
    const proxy = this.proxies.get(name)!;
    await proxy.update({ enabled: true, listen: proxy.listen, upstream: proxy.upstream });
    for (let i = 0; i < SLOW[name].length; i++) await (await proxy.getToxic(`slow-${i}`).catch(() => undefined))?.remove();
  }

  /** Heals every link (after a failure or an interrupted run). */
  async healAll(): Promise<void> {
    await this.client?.reset().catch(() => undefined);
  }

  async stop(): Promise<void> {
    if (this.server && this.server.exitCode === null) {
      const exited = new Promise((resolve) => this.server!.once('exit', resolve));
      this.server.kill('SIGTERM');
      await exited;
    }
  }
}

/** Both cores busy for `ms` (stress-ng's CPU workers), ended by its own timeout or by `stop`. */
export class CpuHog {
  private proc?: ChildProcess;

  start(ms: number): void {
    this.proc = spawn('stress-ng', ['--cpu', '2', '--timeout', `${Math.ceil(ms / 1000)}s`, '--quiet'], { stdio: 'ignore' });
  }

  /** Ends the hog now (its workers are its own children: the whole process group goes). */
  async stop(): Promise<void> {
    const proc = this.proc;
    this.proc = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    await exited;
  }
}
