import { randomUUID } from 'crypto';
import { Clock, systemClock } from '@shortlink/core';
import { planRebalance, ShardNode, ShardRouter, ShardRouterError } from '@shortlink/shard-router';
import { FlowCheck, JournalEntry, MovableShardStore, MoveProgress, MoveRecord, MoveStep, RingStore, RingWatcherInfo, StoredRow } from './ports';
import { flowKey, movement, Pacer, RowSetDigest, stddev } from './flows';
import { checkRingSpec, describeSpec, MovePhase, RingSpec, RingVersion, routerOf } from './ring';

/** What an operator asks for: shards to add (with weights) or remove, weights, ring settings. */
export interface RingChange {
  readonly add?: readonly ShardNode[];
  readonly remove?: readonly string[];
  readonly weights?: Readonly<Record<string, number>>;
  readonly virtualNodes?: number;
  readonly strategy?: 'ring' | 'jump';
}

export interface ReshardReporter {
  step(step: MoveStep, detail: string): void;
  /** Rows of the copy handled so far (copied or already there) out of the planned moving rows. */
  copy(done: number, total: number): void;
  note(message: string): void;
}

export interface ResharderOptions {
  /** Rows read per batch. */
  readonly batchSize?: number;
  /** Moving rows copied (and old rows cleaned up) per second at most; 0: unbounded. */
  readonly ratePerSecond?: number;
  /** Longest wait for every live app instance to report a new ring version. */
  readonly ackTimeoutMs?: number;
  /**
   * An instance whose last report is older than this is gone: its lease (SHARD_RING_LEASE_MS) ran
   * out before, so it no longer writes (docs/design.md, "Online resharding").
   */
  readonly watcherAliveMs: number;
  /** Names this run of the tool in the move record. */
  readonly owner?: string;
  /** A claim on the move not refreshed for this long may be taken over (a killed run). */
  readonly claimStaleMs?: number;
  /** How long to wait for another run's claim to lapse (default: claimStaleMs + 2 s). */
  readonly claimWaitMs?: number;
  readonly reporter?: ReshardReporter;
  readonly clock?: Clock;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Called after each copied batch (tests stop a run there). */
  readonly afterCopyBatch?: (progress: MoveProgress) => void | Promise<void>;
}

export interface ReshardPlan {
  readonly from: RingSpec;
  readonly to: RingSpec;
  readonly examined: number;
  readonly moving: number;
  readonly share: number;
  readonly flows: Record<string, number>;
  readonly before: Record<string, number>;
  readonly after: Record<string, number>;
  readonly stddevBefore: number;
  readonly stddevAfter: number;
}

export interface ReshardStatus {
  readonly ring: RingVersion | null;
  readonly history: readonly RingVersion[];
  readonly move: MoveRecord | null;
  readonly watchers: readonly RingWatcherInfo[];
}

export class ReshardError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReshardError';
  }
}

const quiet: ReshardReporter = { step: () => undefined, copy: () => undefined, note: () => undefined };

/**
 * The resharding tool's state machine (docs/design.md, "Online resharding"). A move goes
 * dual_write → reconcile → copying → verify → frozen → switched → carry → cleanup → done; each ring
 * change is published as a new version and waited for until every live app routes with it.
 * Every step is idempotent and its progress is saved in the meta database, so a killed run is
 * resumed by running again.
 */
export class Resharder {
  private readonly batch: number;
  private readonly clock: Clock;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly reporter: ReshardReporter;
  private readonly owner: string;
  private lastTouch = 0;

  constructor(
    private readonly ring: RingStore,
    private readonly storeOf: (shard: string) => MovableShardStore,
    private readonly options: ResharderOptions,
  ) {
    this.batch = options.batchSize ?? 500;
    this.clock = options.clock ?? systemClock;
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.reporter = options.reporter ?? quiet;
    this.owner = options.owner ?? `reshard-${randomUUID().slice(0, 8)}`;
  }

  // ------------------------------------------------------------------------------ commands

  async status(): Promise<ReshardStatus> {
    const [ring, history, move, watchers] = await Promise.all([
      this.ring.current(),
      this.ring.history(10),
      this.ring.latestMove(),
      this.ring.watchers(this.options.watcherAliveMs),
    ]);
    return { ring, history, move, watchers };
  }

  /** The ring `change` leads to from the current one (jump hash: only the last shard may leave). */
  async target(change: RingChange): Promise<{ current: RingVersion; to: RingSpec }> {
    const current = await this.ring.current();
    if (!current) throw new ReshardError('no shard ring in the meta database yet: start an app once (it writes the configured ring as version 1)');
    return { current, to: targetSpec(current.spec, change) };
  }

  /** How many links would move from where to where (a dry run over every shard's codes). */
  async plan(change: RingChange): Promise<ReshardPlan> {
    const { current, to } = await this.target(change);
    if (current.move) throw new ReshardError(`a move is in progress (${current.move.phase}); see 'reshard status'`);
    return this.planBetween(current.spec, to);
  }

  /** Starts a move to the ring `change` leads to and drives it to the end; resumes the unfinished one when `change` is omitted. */
  async run(change?: RingChange): Promise<MoveProgress> {
    const latest = await this.ring.latestMove();
    if (latest && !latest.finished) {
      if (change) {
        const wanted = targetSpec(latest.progress.from, change);
        if (!sameSpec(wanted, latest.progress.to))
          throw new ReshardError(
            `another move is unfinished (${latest.progress.description}, step ${latest.progress.step}): finish it with 'reshard run' or 'reshard abort'`,
          );
      }
      await this.claim(latest.id);
      this.reporter.note(`resuming move ${latest.id} (${latest.progress.description}) at step ${latest.progress.step}`);
      return this.drive(latest.progress);
    }
    if (!change) throw new ReshardError('nothing to resume: no unfinished move');
    const { current, to } = await this.target(change);
    if (current.move) throw new ReshardError(`the ring (version ${current.version}) has a move in progress but the meta database has no record of it`);
    if (sameSpec(current.spec, to)) throw new ReshardError('the ring already is like that: nothing to move');
    for (const shard of to.shards) this.storeOf(shard.name); // every new shard must be reachable by name
    const plan = await this.planBetween(current.spec, to);
    const id = randomUUID();
    const progress: MoveProgress = {
      id,
      description: `${describeSpec(current.spec)}  →  ${describeSpec(to)}`,
      fromVersion: current.version,
      from: current.spec,
      to,
      step: 'dual_write',
      plan: { examined: plan.examined, moving: plan.moving, flows: plan.flows },
      copyCursors: {},
      retiredCursors: {},
      cleanupCursors: {},
      copied: 0,
      skipped: 0,
      repaired: 0,
      cleaned: 0,
      verify: null,
      timings: {},
      startedAt: new Date(this.clock.now()).toISOString(),
      finishedAt: null,
      error: null,
    };
    await this.ring.saveMove(progress, this.owner, false);
    await this.claim(id);
    this.reporter.note(`move ${id}: ${plan.moving} of ${plan.examined} links change shard (${(plan.share * 100).toFixed(1)} %)`);
    return this.drive(progress);
  }

  /** Stops the unfinished move and puts the ring back as it was (not once it switched: then move back). */
  async abort(): Promise<MoveProgress> {
    const latest = await this.ring.latestMove();
    if (!latest || latest.finished) throw new ReshardError('no unfinished move to abort');
    const p = latest.progress;
    if (['switched', 'carry', 'cleanup'].includes(p.step))
      throw new ReshardError(`the move already switched to the new ring (step ${p.step}): finish it with 'reshard run', then run the opposite move`);
    await this.claim(latest.id);
    if (p.step !== 'aborting') {
      const current = await this.ring.current();
      if (current?.move?.id === p.id) {
        if (current.move.phase !== 'dual_write') await this.acked(await this.publishPhase(p, 'dual_write'));
        const now = (await this.ring.current())!;
        if (!(await this.ring.publish({ version: now.version + 1, spec: p.from, move: null }, now.version)))
          throw new ReshardError('the ring changed while aborting; run abort again');
        await this.acked(now.version + 1);
      }
      p.step = 'aborting';
      await this.save(p);
    }
    await this.timed(p, 'aborting', () => this.removeArrivals(p));
    p.step = 'aborted';
    p.finishedAt = new Date(this.clock.now()).toISOString();
    await this.save(p, true);
    return p;
  }

  // ------------------------------------------------------------------------------ the steps

  private async drive(p: MoveProgress): Promise<MoveProgress> {
    const repair = (sides: 'targets' | 'both') => async () => {
      p.repaired += (await this.compare(p, sides, true)).repaired;
    };
    const steps: Partial<Record<MoveStep, { next: MoveStep; detail: string; run: () => Promise<unknown> }>> = {
      dual_write: {
        next: 'reconcile',
        detail: 'old owners answer, writes go to both owners',
        run: async () => this.acked(await this.publishPhase(p, 'dual_write')),
      },
      reconcile: { next: 'copying', detail: 'new owners: drop rows the old owners no longer have', run: repair('targets') },
      copying: {
        next: 'verify',
        detail: 'new owner first on reads; copying in batches',
        run: async () => {
          await this.acked(await this.publishPhase(p, 'copying'));
          await this.copy(p);
        },
      },
      verify: {
        next: 'frozen',
        detail: 'empty the move journal, then compare both sides and repair differences',
        run: async () => {
          // From here on every write of a moving link leaves its id in the journal (docs/design.md, "Online resharding").
          for (const source of p.from.shards.map((s) => s.name)) await this.storeOf(source).clearJournal();
          await repair('both')();
        },
      },
      frozen: {
        next: 'switched',
        detail: 'writes of moving links wait; final comparison of the links written since verify began',
        run: () => this.freezeAndCompare(p),
      },
      switched: {
        next: 'carry',
        detail: 'the new ring alone',
        run: async () => {
          const version = await this.publishSwitch(p);
          if (p.freeze && p.freeze.heldMs === null) {
            p.freeze.heldMs = this.clock.now() - p.freeze.frozenAt;
            this.reporter.note(`writes of moving links were held for ${p.freeze.heldMs} ms (until the new ring was published)`);
          }
          await this.acked(version);
        },
      },
      carry: { next: 'cleanup', detail: "add the old owners' click counts to the new owners'", run: () => this.carryClicks(p) },
      cleanup: { next: 'done', detail: 'delete moved rows on their old owners', run: () => this.cleanup(p) },
    };
    try {
      for (;;) {
        if (p.step === 'done' || p.step === 'aborted') return p;
        const step = steps[p.step];
        if (!step) throw new ReshardError("the move is being aborted: run 'reshard abort' again to finish that");
        await this.enter(p, p.step, step.detail, step.run);
        p.step = step.next;
        p.error = null;
        if (p.step === 'done') {
          p.finishedAt = new Date(this.clock.now()).toISOString();
          await this.save(p, true);
          this.reporter.step('done', `${p.copied} rows copied, ${p.carried ?? 0} click counts carried, ${p.cleaned} cleaned up`);
          return p;
        }
        await this.save(p);
      }
    } catch (error) {
      p.error = (error as Error).message;
      await this.save(p).catch(() => undefined);
      throw error;
    }
  }

  /**
   * Frozen: nothing writes a moving link, so both sides must now be equal, flow by flow. `verify`
   * left every moving link equal on both sides unless it was written after verify began, and each
   * such write left its id in the journal of its old owner (so did verify's own repairs): only
   * those links are compared and repaired here, so that the freeze does not grow with the shards
   * (docs/design.md, "Online resharding").
   */
  private async freezeAndCompare(p: MoveProgress): Promise<void> {
    const version = await this.publishPhase(p, 'frozen');
    if (!p.freeze || p.freeze.heldMs !== null) {
      p.freeze = { frozenAt: this.clock.now(), heldMs: null, compareMs: 0, journaled: 0, rowsRead: 0 };
      await this.save(p);
    }
    await this.acked(version);
    const t0 = this.clock.now();
    const first = await this.recheck(p, true);
    p.repaired += first.repaired;
    const final = await this.recheck(p, false);
    p.freeze = { ...p.freeze, compareMs: this.clock.now() - t0, journaled: final.journaled, rowsRead: first.rowsRead + final.rowsRead };
    this.reporter.note(
      `frozen: ${final.journaled} journaled links compared (${p.freeze.rowsRead} rows read, ${first.repaired} repaired) in ${p.freeze.compareMs} ms`,
    );
    p.verify = final.flows;
    const bad = final.flows.filter((f) => f.sourceRows !== f.targetRows || f.sourceChecksum !== f.targetChecksum);
    if (bad.length) {
      p.freeze = undefined;
      await this.acked(await this.publishPhase(p, 'copying'));
      p.step = 'verify';
      throw new ReshardError(
        `verification failed for ${bad.map((f) => `${f.from}->${f.to} (${f.sourceRows}/${f.sourceChecksum} vs ${f.targetRows}/${f.targetChecksum})`).join(', ')}; writes resumed, run again to retry`,
      );
    }
  }

  private async enter(p: MoveProgress, step: MoveStep, detail: string, work: () => Promise<unknown>): Promise<void> {
    this.reporter.step(step, detail);
    await this.timed(p, step, work);
  }

  private async timed(p: MoveProgress, step: string, work: () => Promise<unknown>): Promise<void> {
    const t0 = this.clock.now();
    try {
      await work();
    } finally {
      p.timings[step] = (p.timings[step] ?? 0) + (this.clock.now() - t0);
    }
  }

  /** Copies every moving row (and retired code) from its old owner to its new one, resumably. */
  private async copy(p: MoveProgress): Promise<void> {
    const before = routerOf(p.from);
    const after = routerOf(p.to);
    const pacer = new Pacer(this.options.ratePerSecond ?? 0, () => this.clock.now(), this.sleep);
    const total = p.plan.moving;
    this.reporter.copy(p.copied + p.skipped, total);
    for (const source of p.from.shards.map((s) => s.name)) {
      const store = this.storeOf(source);
      for (;;) {
        const rows = await store.scanRows(p.copyCursors[source] ?? null, this.batch);
        if (rows.length === 0) break;
        const moving = rows.filter((r) => movement(before, after, source, r) === 'leaves');
        for (const [target, group] of groupBy(moving, (r) => after.shardFor(r.code))) {
          const outcome = await this.copyChecked(store, this.storeOf(target), group);
          p.copied += outcome.written;
          p.skipped += outcome.skipped;
        }
        p.copyCursors[source] = rows[rows.length - 1].id;
        await this.save(p);
        this.reporter.copy(p.copied + p.skipped, total);
        await this.options.afterCopyBatch?.(p);
        await pacer.take(Math.max(1, moving.length));
      }
      // Retired codes of moving keys: a deleted alias stays out of use on its new owner too.
      for (;;) {
        const cursor = p.retiredCursors[source];
        const after0 = cursor ? { domain: cursor.split('\t')[0], code: cursor.split('\t')[1] } : null;
        const codes = await store.scanRetired(after0, this.batch);
        if (codes.length === 0) break;
        for (const [target, group] of groupBy(
          codes.filter((c) => before.shardFor(c.code) === source && after.shardFor(c.code) !== source),
          (c) => after.shardFor(c.code),
        )) {
          await this.storeOf(target).upsertRetired(group);
        }
        const last = codes[codes.length - 1];
        p.retiredCursors[source] = `${last.domain}\t${last.code}`;
        await this.save(p);
      }
    }
  }

  /**
   * One batch: written where the target does not have it newer (or deleted it during the move),
   * then read back. A row whose copy differs while the source still has it unchanged is written
   * again once; a second difference stops the run.
   */
  private async copyChecked(source: MovableShardStore, target: MovableShardStore, rows: readonly StoredRow[]) {
    const outcome = await target.upsertRows(rows);
    const differs = async (list: readonly StoredRow[]): Promise<StoredRow[]> => {
      const copies = new Map((await target.rowsByIds(list.map((r) => r.id))).map((r) => [r.id, r]));
      const suspects = list.filter((r) => {
        const c = copies.get(r.id);
        return !c || c.version < r.version || (c.version === r.version && c.checksum !== r.checksum);
      });
      if (suspects.length === 0) return [];
      // Deleted on the source since it was read (the copy then met its tombstone) or changed since: not a fault of the copy.
      const now = new Map((await source.rowsByIds(suspects.map((r) => r.id))).map((r) => [r.id, r]));
      return suspects.filter((r) => now.get(r.id)?.checksum === r.checksum);
    };
    let bad = await differs(rows);
    if (bad.length) {
      await target.upsertRows(bad);
      bad = await differs(bad);
      if (bad.length)
        throw new ReshardError(
          `copy of ${bad.length} rows to shard ${target.shardName} does not match the source (first: ${bad[0].domain}/${bad[0].code} id ${bad[0].id})`,
        );
    }
    return outcome;
  }

  /**
   * Compares each flow's rows on both sides (`targets`: only what the new owners hold). With
   * `repair`, a copy that is missing, older or different is written again from the old owner
   * (which decides until the switch) and a copy the old owner no longer has is deleted.
   */
  private async compare(p: MoveProgress, sides: 'targets' | 'both', repair: boolean): Promise<{ flows: FlowCheck[]; repaired: number }> {
    const before = routerOf(p.from);
    const after = routerOf(p.to);
    const { digest, checks } = flowDigests();
    let repaired = 0;
    if (sides === 'both') {
      for (const source of p.from.shards.map((s) => s.name)) {
        const store = this.storeOf(source);
        await this.scanAll(store, async (rows) => {
          const leaving = rows.filter((r) => movement(before, after, source, r) === 'leaves');
          for (const r of leaving) digest(source, after.shardFor(r.code)).source.add(r.checksum);
          if (!repair) return;
          for (const [target, group] of groupBy(leaving, (r) => after.shardFor(r.code))) {
            const t = this.storeOf(target);
            const copies = new Map((await t.rowsByIds(group.map((r) => r.id))).map((r) => [r.id, r]));
            const differ = group.filter((r) => copies.get(r.id)?.checksum !== r.checksum);
            // Compared again while frozen, whatever is done here (a copy refused by a conflict, a newer copy left alone).
            if (differ.length) await store.journal(differ.map(entryOf));
            const stale = differ.filter((r) => (copies.get(r.id)?.version ?? 0) <= r.version);
            if (stale.length === 0) continue;
            await t.deleteRows(stale.filter((r) => copies.has(r.id)).map((r) => r.id));
            const out = await t.upsertRows(stale);
            repaired += out.written;
          }
        });
      }
    }
    for (const target of p.to.shards.map((s) => s.name)) {
      const store = this.storeOf(target);
      await this.scanAll(store, async (rows) => {
        const arriving = rows.filter((r) => movement(before, after, target, r) === 'arrives');
        const extra: StoredRow[] = [];
        for (const [source, group] of groupBy(arriving, (r) => before.shardFor(r.code))) {
          const originals = new Set((await this.storeOf(source).rowsByIds(group.map((r) => r.id))).map((r) => r.id));
          for (const r of group) {
            if (originals.has(r.id)) digest(source, target).target.add(r.checksum);
            else extra.push(r);
          }
        }
        if (extra.length === 0) return;
        if (repair) {
          for (const [source, group] of groupBy(extra, (r) => before.shardFor(r.code))) await this.storeOf(source).journal(group.map(entryOf));
          repaired += await store.deleteRows(extra.map((r) => r.id));
        } else for (const r of extra) digest(before.shardFor(r.code), target).target.add(r.checksum);
      });
    }
    return { flows: checks(), repaired };
  }

  /**
   * The links in the journals of the old owners (written since verify began, or repaired by it),
   * compared by id on both sides, per flow; with `repair`, a copy that is missing or different is
   * written again from the old owner and a copy the old owner no longer has is deleted. Reads
   * the journaled rows only: nothing here grows with the size of the shards.
   */
  private async recheck(p: MoveProgress, repair: boolean): Promise<{ flows: FlowCheck[]; repaired: number; journaled: number; rowsRead: number }> {
    const before = routerOf(p.from);
    const after = routerOf(p.to);
    const { digest, checks } = flowDigests();
    // Every planned flow is listed, with 0 rows when none of its links was written meanwhile.
    for (const flow of Object.keys(p.plan.flows)) {
      const [from, to] = flow.split('->');
      digest(from, to);
    }
    let repaired = 0;
    let journaled = 0;
    let rowsRead = 0;
    const count = (n: number) => void (repaired += n); // never `repaired += await …`: the sources run at once
    // The old owners at once: while frozen, the time of this step is the time writes of moving links wait.
    await Promise.all(
      p.from.shards.map(async ({ name: source }) => {
        const store = this.storeOf(source);
        for (let cursor: string | null = null; ;) {
          const page = await store.journalPage(cursor, this.batch);
          if (page.length === 0) break;
          cursor = page[page.length - 1].id;
          const leaving = page.filter((e) => movement(before, after, source, e) === 'leaves');
          journaled += leaving.length;
          for (const [target, group] of groupBy(leaving, (e) => after.shardFor(e.code))) {
            const t = this.storeOf(target);
            const ids = group.map((e) => e.id);
            const [originals, copies] = await Promise.all([store.rowsByIds(ids), t.rowsByIds(ids)]);
            rowsRead += originals.length + copies.length;
            const d = digest(source, target);
            for (const r of originals) d.source.add(r.checksum);
            for (const r of copies) d.target.add(r.checksum);
            if (!repair) continue;
            const byId = new Map(originals.map((r) => [r.id, r]));
            const copyOf = new Map(copies.map((r) => [r.id, r]));
            const gone = copies.filter((r) => !byId.has(r.id)).map((r) => r.id);
            const stale = originals.filter((r) => copyOf.get(r.id)?.checksum !== r.checksum);
            if (gone.length) count(await t.deleteRows(gone));
            // A link deleted on the old owner keeps its code out of use on the new one too (the copy of
            // its retired code went with the second half of the delete, which may not have arrived).
            const deleted = group.filter((e) => !byId.has(e.id));
            if (deleted.length) {
              const retired = await store.retiredAmong(deleted, new Date(this.clock.now()));
              if (retired.length) await t.upsertRetired(retired);
            }
            if (stale.length === 0) continue;
            await t.deleteRows(stale.filter((r) => copyOf.has(r.id)).map((r) => r.id)); // an equal version that differs is not overwritten
            count((await t.upsertRows(stale)).written);
            // While frozen the redirects count on the new owner: what its copy had counted stays with the link.
            for (const r of stale) {
              const counted = copyOf.get(r.id)?.clicks ?? 0;
              if (counted > 0) await t.addClicks(r, r.id, counted);
            }
          }
          await this.touch();
        }
      }),
    );
    return { flows: checks(), repaired, journaled, rowsRead };
  }

  /**
   * After the switch every instance counts a moving link's redirects on its new owner, and the old
   * owner's `click_count` is final: it is added to the new owner's, once per link (the carry mark),
   * so that a lost Redis counter of a moved maxClicks link restarts from its whole count
   * (docs/design.md, "Max clicks", "Online resharding"). Resumable by source cursor.
   */
  private async carryClicks(p: MoveProgress): Promise<void> {
    const before = routerOf(p.from);
    const after = routerOf(p.to);
    const cursors = (p.carryCursors ??= {});
    for (const source of p.from.shards.map((s) => s.name)) {
      const store = this.storeOf(source);
      for (;;) {
        const rows = await store.scanRows(cursors[source] ?? null, this.batch);
        if (rows.length === 0) break;
        const counted = rows.filter((r) => r.clicks > 0 && movement(before, after, source, r) === 'leaves');
        for (const [target, group] of groupBy(counted, (r) => after.shardFor(r.code))) {
          p.carried = (p.carried ?? 0) + (await this.storeOf(target).carryClicks(group.map((r) => ({ id: r.id, clicks: r.clicks }))));
        }
        cursors[source] = rows[rows.length - 1].id;
        await this.save(p);
      }
    }
  }

  /** Deletes, on each old owner, the rows and retired codes it no longer owns (resumable, paced). */
  private async cleanup(p: MoveProgress): Promise<void> {
    const after = routerOf(p.to);
    const pacer = new Pacer(this.options.ratePerSecond ?? 0, () => this.clock.now(), this.sleep);
    for (const source of p.from.shards.map((s) => s.name)) {
      const store = this.storeOf(source);
      for (;;) {
        const rows = await store.scanRows(p.cleanupCursors[source] ?? null, this.batch);
        if (rows.length === 0) break;
        const gone = rows.filter((r) => after.shardFor(r.code) !== source);
        if (gone.length) p.cleaned += await store.deleteRows(gone.map((r) => r.id));
        p.cleanupCursors[source] = rows[rows.length - 1].id;
        await this.save(p);
        await pacer.take(Math.max(1, gone.length));
      }
      await this.scanRetiredAll(store, (codes) => store.deleteRetired(codes.filter((c) => after.shardFor(c.code) !== source)));
    }
    for (const shard of new Set([...p.from.shards, ...p.to.shards].map((s) => s.name))) await this.storeOf(shard).clearTombstones();
  }

  /** Abort: every row (and retired code) a new owner received for the move goes. */
  private async removeArrivals(p: MoveProgress): Promise<void> {
    const before = routerOf(p.from);
    for (const target of p.to.shards.map((s) => s.name)) {
      const store = this.storeOf(target);
      await this.scanAll(store, async (rows) => {
        const arrived = rows.filter((r) => before.shardFor(r.code) !== target);
        if (arrived.length) await store.deleteRows(arrived.map((r) => r.id));
      });
      await this.scanRetiredAll(store, (codes) => store.deleteRetired(codes.filter((c) => before.shardFor(c.code) !== target)));
    }
    for (const shard of new Set([...p.from.shards, ...p.to.shards].map((s) => s.name))) await this.storeOf(shard).clearTombstones();
  }

  // ------------------------------------------------------------------------------ ring versions

  /** Publishes the move at `phase` unless the ring already has it so; returns that version. */
  private async publishPhase(p: MoveProgress, phase: MovePhase): Promise<number> {
    const current = await this.ring.current();
    if (!current) throw new ReshardError('the shard ring disappeared from the meta database');
    if (current.move?.id === p.id && current.move.phase === phase) return current.version;
    let next: RingVersion;
    if (current.move?.id === p.id) next = { version: current.version + 1, spec: current.spec, move: { ...current.move, phase } };
    else if (!current.move && current.version === p.fromVersion && phase === 'dual_write')
      next = { version: current.version + 1, spec: p.from, move: { id: p.id, phase, to: p.to } };
    else
      throw new ReshardError(`the ring changed under this move (now version ${current.version}${current.move ? `, move ${current.move.id}` : ''}); abort it`);
    if (!(await this.ring.publish(next, current.version))) throw new ReshardError('another writer changed the ring at the same time; run again');
    this.reporter.note(`ring version ${next.version}: ${phase}`);
    return next.version;
  }

  private async publishSwitch(p: MoveProgress): Promise<number> {
    const current = (await this.ring.current())!;
    if (!current.move && sameSpec(current.spec, p.to)) return current.version;
    if (current.move?.id !== p.id) throw new ReshardError(`the ring changed under this move (now version ${current.version})`);
    if (!(await this.ring.publish({ version: current.version + 1, spec: p.to, move: null }, current.version)))
      throw new ReshardError('another writer changed the ring at the same time; run again');
    this.reporter.note(`ring version ${current.version + 1}: ${describeSpec(p.to)}`);
    return current.version + 1;
  }

  /** Waits until every live app instance routes with `version` (or a newer one). */
  private async acked(version: number): Promise<void> {
    const deadline = this.clock.now() + (this.options.ackTimeoutMs ?? 60_000);
    for (;;) {
      const watchers = await this.ring.watchers(this.options.watcherAliveMs);
      const behind = watchers.filter((w) => w.version < version);
      if (behind.length === 0) return;
      if (this.clock.now() > deadline) {
        throw new ReshardError(
          `instances still on an older ring than version ${version}: ${behind.map((w) => `${w.instanceId} (${w.app}, v${w.version}, seen ${Math.round(w.ageMs / 1000)} s ago)`).join(', ')}; run again to keep waiting`,
        );
      }
      await this.touch();
      await this.sleep(100);
    }
  }

  // ------------------------------------------------------------------------------ helpers

  async planBetween(from: RingSpec, to: RingSpec): Promise<ReshardPlan> {
    const before = routerOf(from);
    const after = routerOf(to);
    const flows: Record<string, number> = {};
    const countBefore: Record<string, number> = Object.fromEntries(from.shards.map((s) => [s.name, 0]));
    const countAfter: Record<string, number> = Object.fromEntries(to.shards.map((s) => [s.name, 0]));
    let examined = 0;
    let moving = 0;
    for (const shard of from.shards.map((s) => s.name)) {
      const store = this.storeOf(shard);
      let cursor: string | null = null;
      for (;;) {
        const page = await store.listIdentifiers(cursor, 5000);
        if (page.length === 0) break;
        cursor = page[page.length - 1].id;
        const owned = page.filter((r) => before.shardFor(r.code) === shard).map((r) => r.code);
        const plan = planRebalance(before, after, owned);
        examined += plan.examined;
        moving += plan.moves.length;
        for (const [flow, n] of Object.entries(plan.flows)) flows[flow] = (flows[flow] ?? 0) + n;
        countBefore[shard] += owned.length;
        for (const code of owned) countAfter[after.shardFor(code)]++;
      }
    }
    return {
      from,
      to,
      examined,
      moving,
      share: examined ? moving / examined : 0,
      flows,
      before: countBefore,
      after: countAfter,
      stddevBefore: stddev(Object.values(countBefore)),
      stddevAfter: stddev(Object.values(countAfter)),
    };
  }

  private async scanAll(store: MovableShardStore, each: (rows: StoredRow[]) => Promise<void>): Promise<void> {
    let cursor: string | null = null;
    for (;;) {
      const rows = await store.scanRows(cursor, this.batch);
      if (rows.length === 0) return;
      await each(rows);
      cursor = rows[rows.length - 1].id;
      await this.touch();
    }
  }

  private async scanRetiredAll(
    store: MovableShardStore,
    each: (codes: Array<{ domain: string; code: string; retiredUntil: Date }>) => Promise<void>,
  ): Promise<void> {
    let after: { domain: string; code: string } | null = null;
    for (;;) {
      const codes = await store.scanRetired(after, this.batch);
      if (codes.length === 0) return;
      await each(codes);
      after = codes[codes.length - 1];
    }
  }

  private async claim(id: string): Promise<void> {
    const staleMs = this.options.claimStaleMs ?? 10_000;
    const deadline = this.clock.now() + (this.options.claimWaitMs ?? staleMs + 2000);
    let told = false;
    while (!(await this.ring.claimMove(id, this.owner, staleMs))) {
      if (this.clock.now() > deadline) throw new ReshardError('another run of the tool holds this move; stop it first');
      if (!told) this.reporter.note(`another run held this move until recently; waiting up to ${Math.round(staleMs / 1000)} s for its claim to lapse`);
      told = true;
      await this.sleep(500);
    }
  }

  private currentProgress: MoveProgress | null = null;

  private async save(p: MoveProgress, finished = false): Promise<void> {
    this.currentProgress = p;
    await this.ring.saveMove(p, this.owner, finished);
    this.lastTouch = this.clock.now();
  }

  /** Refreshes the claim during long steps without progress to save. */
  private async touch(): Promise<void> {
    if (this.currentProgress && this.clock.now() - this.lastTouch > 2000) await this.save(this.currentProgress);
  }
}

/** Applies a change to a ring spec through the router's own rules (jump hash: only the last shard may leave). */
export function targetSpec(from: RingSpec, change: RingChange): RingSpec {
  let router: ShardRouter = routerOf(from);
  for (const name of change.remove ?? []) router = router.withoutShard(name);
  for (const node of change.add ?? []) router = router.withShard(node);
  const strategy = change.strategy ?? from.strategy;
  const weights = {
    ...Object.fromEntries(from.shards.map((s) => [s.name, s.weight ?? 1])),
    ...Object.fromEntries((change.add ?? []).map((s) => [s.name, s.weight ?? 1])),
    ...change.weights,
  };
  for (const name of Object.keys(change.weights ?? {})) {
    if (!router.shards().includes(name)) throw new ShardRouterError(`cannot weight shard "${name}": it is not on the ring`);
  }
  return checkRingSpec({
    strategy,
    virtualNodes: change.virtualNodes ?? from.virtualNodes,
    shards: router.shards().map((name) => ({ name, weight: weights[name] ?? 1 })),
  });
}

export function sameSpec(a: RingSpec, b: RingSpec): boolean {
  const norm = (s: RingSpec) =>
    JSON.stringify({ strategy: s.strategy, virtualNodes: s.strategy === 'jump' ? 0 : s.virtualNodes, shards: s.shards.map((n) => [n.name, n.weight ?? 1]) });
  return norm(a) === norm(b);
}

const entryOf = (r: StoredRow): JournalEntry => ({ id: r.id, domain: r.domain, code: r.code });

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

/** The row digests of each flow (old owner → new owner) of a comparison, made on first use, and the checks they give, in flow order. */
function flowDigests() {
  const digests = new Map<string, { from: string; to: string; source: RowSetDigest; target: RowSetDigest }>();
  const digest = (from: string, to: string) => {
    const key = flowKey(from, to);
    if (!digests.has(key)) digests.set(key, { from, to, source: new RowSetDigest(), target: new RowSetDigest() });
    return digests.get(key)!;
  };
  const checks = (): FlowCheck[] =>
    [...digests.values()]
      .map((d) => ({
        from: d.from,
        to: d.to,
        sourceRows: d.source.rows,
        sourceChecksum: d.source.checksum,
        targetRows: d.target.rows,
        targetChecksum: d.target.checksum,
      }))
      .sort((a, b) => flowKey(a.from, a.to).localeCompare(flowKey(b.from, b.to)));
  return { digest, checks };
}
