/**
 * Partitions between processes of one machine (docs/reliability.md, "Faults"): every packet between
 * the processes of side A and those of side B is dropped, both ways, while each side still reaches
 * everything else. Used where a proxy cannot stand in the way: a Redis master cut off from its replica
 * and the other masters (Redis Cluster nodes learn each other's addresses from the cluster bus and
 * connect directly), and Kafka cut off from one redirect instance (the broker advertises one address
 * to every client).
 *
 * Everything runs on 127.0.0.1, so addresses cannot tell the sides apart; the sockets' owners can.
 * Each side's processes go into a net_cls cgroup of their own (cgroup v1; moving a process there tags
 * its existing sockets too), and an iptables chain in OUTPUT (every loopback packet passes it, both
 * ways) marks each connection with the side of every packet it carries: by the sending socket's
 * cgroup, and by the listening ports of each side (a SYN-ACK or a reset is sent by no full socket, so
 * a connection to a side's listener counts as that side's from its first packet). A connection marked
 * by both sides is dropped: new ones never complete their handshake, established ones stall.
 * Healing removes the chain and moves the processes back; the marks carry a per-cut id, so a
 * connection marked in an earlier cut is never taken for one of this cut.
 *
 * Needs root, the iptables binary (tools/ci/install-chaos-tools.sh) and a kernel with xt_cgroup,
 * xt_connmark and xt_multiport (the CI machine's has them).
 */
import { execFile, spawn } from 'child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'fs';
import { join } from 'path';
import { promisify } from 'util';

const run = promisify(execFile);

export const NET_CLS = '/sys/fs/cgroup/net_cls';

/** One side of a cut: its processes (with their descendants and threads) and the TCP ports they listen on. */
export interface Side {
  pids: number[];
  ports: number[];
}

/** A side's bit in a connection's mark; the bits above carry the cut's id. */
const SIDE_BITS = 0x3;
const ID_MASK = 0x0ffffffc;

/** The iptables rules of a cut (as argument lists for `iptables`), in order: pure, so a unit test reads them. */
export function cutRules(chain: string, id: number, classids: [number, number], sides: [Side, Side]): string[][] {
  const mark = (id << 2) & ID_MASK;
  const hex = (n: number) => `0x${n.toString(16)}`;
  const rules: string[][] = [];
  for (const i of [0, 1]) {
    const sub = `${chain}-${'AB'[i]}`;
    rules.push(['-N', sub]);
    // A connection last marked by another cut starts again from no side.
    rules.push([
      '-A',
      sub,
      '-m',
      'connmark',
      '!',
      '--mark',
      `${hex(mark)}/${hex(ID_MASK)}`,
      '-j',
      'CONNMARK',
      '--set-xmark',
      `${hex(mark)}/${hex(ID_MASK | SIDE_BITS)}`,
    ]);
    rules.push(['-A', sub, '-j', 'CONNMARK', '--or-mark', hex(1 << i)]);
  }
  rules.push(['-N', chain]);
  for (const [i, side] of sides.entries()) {
    const sub = `${chain}-${'AB'[i]}`;
    rules.push(['-A', chain, '-m', 'cgroup', '--cgroup', hex(classids[i]), '-j', sub]);
    // multiport takes 15 ports a rule; --ports matches the source or the destination port.
    for (let k = 0; k < side.ports.length; k += 15)
      rules.push(['-A', chain, '-p', 'tcp', '-m', 'multiport', '--ports', side.ports.slice(k, k + 15).join(','), '-j', sub]);
  }
  rules.push(['-A', chain, '-m', 'connmark', '--mark', `${hex(mark | SIDE_BITS)}/${hex(ID_MASK | SIDE_BITS)}`, '-j', 'DROP']);
  rules.push(['-I', 'OUTPUT', '-j', chain]);
  return rules;
}

/** The rules as one `iptables-restore --noflush` input: applied at once, the jump from OUTPUT last (the cut begins there). */
export function restoreScript(rules: string[][]): string {
  const lines = rules.map((r) => (r[0] === '-N' ? `:${r[1]} - [0:0]` : r[0] === '-I' ? `-I ${r[1]} 1 ${r.slice(2).join(' ')}` : r.join(' ')));
  const chains = lines.filter((l) => l.startsWith(':'));
  return ['*filter', ...chains, ...lines.filter((l) => !l.startsWith(':')), 'COMMIT', ''].join('\n');
}

/** A process and its descendants (a redirect instance may run children; the cgroup takes every thread of each). */
function withDescendants(pid: number): number[] {
  const out = [pid];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      for (const c of children ? children.split(/\s+/).map(Number) : []) out.push(...withDescendants(c));
    }
  } catch {
    // gone
  }
  return out;
}

export interface Cut {
  chain: string;
  cgroups: [string, string];
  pids: number[];
  /** Just before the rules were applied: the cut may have begun from here. */
  at: number;
}

export class Partitions {
  private cuts = 0;
  private readonly open = new Set<Cut>();
  private iptables = 'iptables';

  constructor(
    /** Unique on the machine (several runs may cut at once): the run's process id by default. */
    private readonly runId = process.pid,
  ) {}

  /** Checks the tools and mounts the net_cls hierarchy if it is not there yet. */
  async prepare(): Promise<void> {
    if (process.getuid?.() !== 0) throw new Error('partitions need root (iptables, cgroups)');
    // The legacy backend needs only the ip_tables modules, which every kernel with netfilter has.
    this.iptables = (await run('iptables-legacy', ['-V']).then(
      () => true,
      () => false,
    ))
      ? 'iptables-legacy'
      : 'iptables';
    await run(this.iptables, ['-S', 'OUTPUT']).catch((e: Error) => {
      throw new Error(`${this.iptables} does not work (${e.message.split('\n')[0]}): run 'bash tools/ci/install-chaos-tools.sh'`);
    });
    if (!existsSync(join(NET_CLS, 'net_cls.classid'))) {
      mkdirSync(NET_CLS, { recursive: true });
      await run('mount', ['-t', 'cgroup', '-o', 'net_cls', 'net_cls', NET_CLS]);
    }
  }

  /** Cuts side A off from side B until `heal`. */
  async cut(a: Side, b: Side): Promise<Cut> {
    const n = ++this.cuts;
    const id = ((this.runId & 0xffff) << 10) | (n & 0x3ff);
    const base = 0x5c000000 + (((this.runId & 0x3fff) << 10) | ((n & 0xff) << 2));
    const classids: [number, number] = [base + 1, base + 2];
    const chain = `SLCHAOS-${this.runId}-${n}`;
    const cut: Cut = { chain, cgroups: ['', ''], pids: [], at: 0 };
    this.open.add(cut);
    for (const [i, side] of [a, b].entries()) {
      const dir = join(NET_CLS, `shortlink-chaos-${this.runId}-${n}-${'ab'[i]}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'net_cls.classid'), String(classids[i]));
      cut.cgroups[i] = dir;
      for (const pid of side.pids.flatMap(withDescendants)) {
        writeFileSync(join(dir, 'cgroup.procs'), String(pid));
        cut.pids.push(pid);
      }
    }
    cut.at = Date.now();
    await this.restore(restoreScript(cutRules(chain, id, classids, [a, b])));
    return cut;
  }

  private restore(script: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const p = spawn(`${this.iptables}-restore`, ['--noflush', '-w'], { stdio: ['pipe', 'ignore', 'pipe'] });
      let err = '';
      p.stderr.on('data', (d) => (err += String(d)));
      p.on('error', reject);
      p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${this.iptables}-restore: ${err.trim() || `exit ${code}`}`))));
      p.stdin.end(script);
    });
  }

  /**
   * The cut undone: the jump from OUTPUT removed first (the cut ends there: resolves with that
   * moment), then the chains and the cgroups; tolerates what is already gone.
   */
  async heal(cut: Cut): Promise<number> {
    const ipt = (...args: string[]) => run(this.iptables, ['-w', ...args]).catch(() => undefined);
    await ipt('-D', 'OUTPUT', '-j', cut.chain);
    const healed = Date.now();
    for (const c of [cut.chain, `${cut.chain}-A`, `${cut.chain}-B`]) await ipt('-F', c);
    for (const c of [cut.chain, `${cut.chain}-A`, `${cut.chain}-B`]) await ipt('-X', c);
    for (const pid of cut.pids) {
      try {
        writeFileSync(join(NET_CLS, 'cgroup.procs'), String(pid));
      } catch {
        // gone
      }
    }
    for (const dir of cut.cgroups) {
      try {
        if (dir) rmdirSync(dir);
      } catch {
        // still has a process (started by it since): it leaves with that process
      }
    }
    this.open.delete(cut);
    return healed;
  }

  async healAll(): Promise<void> {
    for (const cut of [...this.open]) await this.heal(cut);
  }
}
