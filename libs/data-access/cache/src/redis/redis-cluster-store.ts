import { Cluster, Redis } from 'ioredis';
import type { Socket } from 'net';
import { BitmapBits, CacheStore } from '@shortlink/read-path';
import keySlot from 'cluster-key-slot';

const DELETE_IF_EQUALS = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";
const INCR_WITH_TTL = "local n = redis.call('INCRBY', KEYS[1], ARGV[1]) if n == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return n";
/** ARGV: value, version, ttl ms ('' for none). A JSON value with a version at least as new stays. */
const SET_IF_NEWER = `local cur = redis.call('GET', KEYS[1])
if cur and cur ~= '' then
  local ok, obj = pcall(cjson.decode, cur)
  if ok and type(obj) == 'table' and tonumber(obj.version) and tonumber(obj.version) >= tonumber(ARGV[2]) then return 0 end
end
if ARGV[3] ~= '' then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3]) else redis.call('SET', KEYS[1], ARGV[1]) end
return 1`;
/** ARGV: limit, initial. The new count, or -1 at the limit; a missing key starts from `initial`. */
const INCREMENT_BELOW = `local cur = redis.call('GET', KEYS[1])
local n = tonumber(cur) or tonumber(ARGV[2])
if n >= tonumber(ARGV[1]) then return -1 end
redis.call('SET', KEYS[1], n + 1)
return n + 1`;

/**
 * Run on one node with every key in ARGV (a key list spanning slots cannot be KEYS in a cluster):
 * ARGV[1] = n, ARGV[2..n+1] keys to delete where they hold the null sentinel '', then pairs of
 * bitmap key and comma-separated offsets. A key whose slot this node does not serve fails the
 * script ("non local key"), never acts elsewhere.
 */
const DROP_NULLS_AND_SET_BITS = `local n = tonumber(ARGV[1])
for i = 2, n + 1 do if redis.call('GET', ARGV[i]) == '' then redis.call('DEL', ARGV[i]) end end
for i = n + 2, #ARGV, 2 do
  local key = ARGV[i]
  for o in string.gmatch(ARGV[i + 1], '%d+') do redis.call('SETBIT', key, o, 1) end
end
return 1`;

/** How often the cluster client reads the slot map again on its own. */
export const SLOTS_REFRESH_MS = 5000;

/** The keys and bitmaps of one node. */
interface NodeWork {
  readonly keys: string[];
  readonly bitmaps: BitmapBits[];
}

export interface RedisClusterOptions {
  readonly nodes: ReadonlyArray<{ host: string; port: number }>;
  /** Per-command timeout, so a dead node fails a lookup fast instead of hanging the redirect. */
  readonly commandTimeoutMs?: number;
  /**
   * How the commands issued in one event-loop turn reach a node (measured in docs/benchmarks.md):
   * - `cork` (default): every master socket is corked at the turn's first command and uncorked in
   *   setImmediate, after every socket read of that turn, so the turn's commands leave as one
   *   writev per node. No objects beyond the commands themselves.
   * - `pipeline`: ioredis auto-pipelining, the same batching through one Pipeline object per node
   *   and turn. Those objects outlive a young-generation GC cycle and are promoted, which made the
   *   minor GCs of a Redis-hit redirect 35–55 ms (the p99).
   * - `off`: one socket write per command.
   */
  readonly writeBatching?: 'cork' | 'pipeline' | 'off';
}

/**
 * Redis Cluster through ioredis: string values (docs/design.md, "Redirect read path"). Every
 * command, reads included, goes to the slot's master: a replica lags asynchronously, and a read
 * from it could undo an invalidation that the master already applied.
 */
export class RedisClusterStore implements CacheStore {
  readonly client: Cluster;
  private readonly deadlineMs: number;
  private readyWaiter: Promise<void> | null = null;
  private readonly corkWrites: boolean;
  /** Sockets corked in the current event-loop turn; null when none is. */
  private corked: Socket[] | null = null;

  constructor(options: RedisClusterOptions) {
    this.deadlineMs = options.commandTimeoutMs ?? 500;
    const batching = options.writeBatching ?? 'cork';
    this.corkWrites = batching === 'cork';
    this.client = new Cluster([...options.nodes], {
      scaleReads: 'master',
      enableAutoPipelining: batching === 'pipeline',
      enableOfflineQueue: true,
      maxRedirections: 8,
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 200,
      slotsRefreshTimeout: 2000,
      // A master that hangs with its connections open never answers MOVED: without a periodic
      // refresh the client would keep sending its slots there after a replica took over
      // (docs/design.md, "Edits reach every instance").
      slotsRefreshInterval: SLOTS_REFRESH_MS,
      clusterRetryStrategy: (times) => Math.min(100 * times, 2000),
      redisOptions: {
        commandTimeout: this.deadlineMs,
        maxRetriesPerRequest: 1,
        connectTimeout: 2000,
      },
      lazyConnect: false,
    });
    // Errors surface per command; the connection-level event only needs a listener so that
    // ioredis does not print "Unhandled error event".
    this.client.on('error', () => undefined);
  }

  /**
   * Every command gets a deadline. ioredis' commandTimeout covers a command once the cluster has
   * handed it to a node (a node's own offline queue included), but not while the cluster itself
   * is not ready: with every node down, commands wait in the cluster's offline queue until Redis
   * returns, and the redirect path (and its breaker) would hang instead of falling back to the
   * shards. Only then is a second timer armed; a healthy cluster pays for one timer per command.
   */
  private bounded<T>(command: Promise<T>): Promise<T> {
    if (this.client.status === 'ready') return command;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis: no answer within ${this.deadlineMs} ms`)), this.deadlineMs);
      command.then(
        (v) => (clearTimeout(timer), resolve(v)),
        (e) => (clearTimeout(timer), reject(e)),
      );
    });
  }

  /**
   * Called before a command is issued: the first command of an event-loop turn corks the socket of
   * every connected master, setImmediate uncorks them (the check phase runs after the poll phase,
   * so every request read in this turn has issued its commands by then). ioredis writes each
   * command with its own socket.write; a corked socket buffers them and flushes one writev.
   */
  private batch(): void {
    if (!this.corkWrites || this.corked !== null || this.client.status !== 'ready') return;
    const corked: Socket[] = [];
    for (const node of this.client.nodes('master')) {
      const socket = node.stream as Socket | undefined;
      if (socket && socket.writable) {
        socket.cork();
        corked.push(socket);
      }
    }
    this.corked = corked;
    setImmediate(this.uncork);
  }

  private readonly uncork = (): void => {
    const corked = this.corked;
    this.corked = null;
    // A socket closed meanwhile is simply uncorked too (a no-op for a destroyed stream).
    if (corked) for (const socket of corked) socket.uncork();
  };

  /**
   * A command issued outside this store's own methods (the plan windows' script), batched onto the
   * sockets as they are; the caller bounds it with a deadline of its own.
   */
  batched<T>(command: () => Promise<T>): Promise<T> {
    this.batch();
    return command();
  }

  /** Every command goes through here: batched onto the sockets (it must be corked before ioredis writes), then bounded. */
  private issue<T>(command: () => Promise<T>): Promise<T> {
    this.batch();
    return this.bounded(command());
  }

  get(key: string): Promise<string | null> {
    return this.issue(() => this.client.get(key));
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    await this.issue(() => (ttlMs ? this.client.set(key, value, 'PX', ttlMs) : this.client.set(key, value)));
  }

  /** One DEL per key: keys of different slots cannot share a command in a cluster. */
  async del(keys: readonly string[]): Promise<void> {
    await this.issue(() => Promise.all(keys.map((k) => this.client.del(k))));
  }

  pttl(key: string): Promise<number> {
    return this.issue(() => this.client.pttl(key));
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    return (await this.issue(() => this.client.set(key, value, 'PX', ttlMs, 'NX'))) === 'OK';
  }

  /** The owner check and the delete must be one step, or a lock that expired and was taken by
   *  another instance could be deleted (the compare-and-delete unlock of docs/design.md, "Redirect read path"). */
  async deleteIfEquals(key: string, value: string): Promise<boolean> {
    return (await this.issue(() => this.client.eval(DELETE_IF_EQUALS, 1, key, value))) === 1;
  }

  async incrBy(key: string, delta: number, ttlMs: number): Promise<number> {
    return Number(await this.issue(() => this.client.eval(INCR_WITH_TTL, 1, key, delta, ttlMs)));
  }

  async setIfNewer(key: string, value: string, version: number, ttlMs?: number): Promise<boolean> {
    return (await this.issue(() => this.client.eval(SET_IF_NEWER, 1, key, value, version, ttlMs ?? ''))) === 1;
  }

  async incrementBelow(key: string, limit: number, initial: number): Promise<number | null> {
    const n = Number(await this.issue(() => this.client.eval(INCREMENT_BELOW, 1, key, limit, initial)));
    return n < 0 ? null : n;
  }

  async setBits(key: string, offsets: readonly number[]): Promise<void> {
    if (offsets.length === 0) return;
    await this.issue(() => this.client.call('BITFIELD', key, ...offsets.flatMap((o) => ['SET', 'u1', String(o), '1'])));
  }

  async getBits(key: string, offsets: readonly number[]): Promise<number[]> {
    if (offsets.length === 0) return [];
    const result = (await this.issue(() => this.client.call('BITFIELD_RO', key, ...offsets.flatMap((o) => ['GET', 'u1', String(o)])))) as number[];
    return result.map(Number);
  }

  countBits(key: string, startByte: number, endByte: number): Promise<number> {
    return this.issue(() => this.client.bitcount(key, startByte, endByte));
  }

  /**
   * Keys and bitmaps grouped by the master serving their slot, one script per node (docs/design.md,
   * "Batch creation"): a chunk of 1000 created links costs 3 commands instead of 1000 compare-and-
   * deletes and a BITFIELD of 4 arguments per bit. A node that refuses (slots moved, node down)
   * gets its share again one command per key through the cluster client, which follows redirections.
   */
  async dropNullsAndSetBits(keys: readonly string[], bitmaps: readonly BitmapBits[]): Promise<void> {
    const groups = this.byNode(keys, bitmaps);
    await Promise.all(
      [...groups].map(([node, work]) => {
        if (!node) return this.oneByOne(work);
        const args: string[] = [String(work.keys.length), ...work.keys];
        for (const b of work.bitmaps) args.push(b.key, b.offsets.join(','));
        return this.issue(() => node.eval(DROP_NULLS_AND_SET_BITS, 0, ...args)).then(
          () => undefined,
          () => this.oneByOne(work),
        );
      }),
    );
  }

  /**
   * One script per master node over keys of many slots: `entries[i]` is `[key, ...args]`, handed to
   * the script in ARGV (a cluster takes a script's KEYS from one slot only), which answers one value
   * per entry in order. One command per node instead of one per key (the visitor windows' merges:
   * docs/design.md, "Link options"). A node that refuses (slots moved, down) gets its entries again
   * one at a time through `one`, which follows redirections.
   */
  async perNode<T>(
    script: string,
    entries: ReadonlyArray<readonly [string, ...Array<string | number>]>,
    one: (entry: (typeof entries)[number]) => Promise<T>,
  ): Promise<T[]> {
    const out = new Array<T>(entries.length);
    const owner = this.ownerOf();
    const groups = new Map<Redis | null, number[]>();
    entries.forEach(([key], i) => {
      const node = owner(key);
      const list = groups.get(node);
      if (list) list.push(i);
      else groups.set(node, [i]);
    });
    await Promise.all(
      [...groups].map(async ([node, indexes]) => {
        const oneByOne = () => Promise.all(indexes.map(async (i) => (out[i] = await one(entries[i]))));
        if (!node) return oneByOne();
        try {
          const answers = (await this.issue(() => node.eval(script, 0, ...indexes.flatMap((i) => entries[i])))) as T[];
          indexes.forEach((i, k) => (out[i] = answers[k]));
        } catch {
          await oneByOne();
        }
      }),
    );
    return out;
  }

  /** The master serving a key's slot as this client knows it; null when not known (cluster not ready, slot without a master). */
  private ownerOf(): (key: string) => Redis | null {
    const slots = this.client.status === 'ready' ? (this.client as unknown as { slots: Array<string[] | undefined> }).slots : [];
    const masters = new Map<string, Redis>();
    for (const node of this.client.nodes('master')) masters.set(`${node.options.host}:${node.options.port}`, node);
    return (key) => {
      const owner = slots[keySlot(key)]?.[0];
      return (owner && masters.get(owner)) || null;
    };
  }

  /** null: the node is not known (cluster not ready, slot without a master): the per-key path. */
  private byNode(keys: readonly string[], bitmaps: readonly BitmapBits[]): Map<Redis | null, NodeWork> {
    const nodeOf = this.ownerOf();
    const groups = new Map<Redis | null, NodeWork>();
    const workOf = (key: string) => {
      const node = nodeOf(key);
      let work = groups.get(node);
      if (!work) groups.set(node, (work = { keys: [], bitmaps: [] }));
      return work;
    };
    for (const key of keys) workOf(key).keys.push(key);
    for (const b of bitmaps) if (b.offsets.length) workOf(b.key).bitmaps.push(b);
    return groups;
  }

  private async oneByOne(work: NodeWork): Promise<void> {
    await Promise.all([...work.keys.map((k) => this.deleteIfEquals(k, '')), ...work.bitmaps.map((b) => this.setBits(b.key, b.offsets))]);
  }

  async ping(): Promise<void> {
    if (this.client.status !== 'ready') {
      // One shared waiter, so repeated health checks during an outage do not pile up listeners.
      this.readyWaiter ??= new Promise<void>((resolve) => this.client.once('ready', () => ((this.readyWaiter = null), resolve())));
      await this.bounded(this.readyWaiter);
    }
    const masters = this.client.nodes('master');
    if (masters.length === 0) throw new Error('redis cluster has no reachable master');
    await this.bounded(Promise.all(masters.map((n) => n.ping())));
  }

  /** QUIT when connected; in any case stop reconnecting (a cluster still connecting keeps its retry timers otherwise). */
  async close(): Promise<void> {
    if (this.client.status === 'ready') await this.client.quit().catch(() => undefined);
    this.client.disconnect();
  }
}
