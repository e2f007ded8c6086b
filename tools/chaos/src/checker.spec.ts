import {
  atRiskAtKill,
  check,
  checkAcknowledgedWrites,
  checkClicks,
  checkConversions,
  checkErrors,
  checkMaxClicks,
  checkOverload,
  checkRedirectTargets,
  checkVisitorLimit,
  faultSummary,
  OVERLOAD,
  RECOVERY_MS,
  BACKLOG_DRAIN_MS,
} from './checker';
import { ChaosRecord, Fault, Op } from './record';

/**
 * The checker against hand-made records: each test is a run that broke one invariant, and the
 * checker must name it; the clean run beside each must pass.
 */
const URL_A = 'https://example.com/a';
const URL_B = 'https://example.com/b';
const CT = 'application/problem+json; charset=utf-8';

let clock = 1_000_000;
const op = (o: Partial<Op> & Pick<Op, 'kind'>): Op => {
  const start = o.start ?? (clock += 1000);
  const status = o.status === undefined ? 200 : o.status;
  return {
    client: 0,
    instance: o.kind === 'redirect' ? 'redirect-0' : 'generation-0',
    start,
    end: start + 10,
    status,
    outcome: status === null || status >= 500 ? 'unknown' : status >= 400 ? 'fail' : 'ok',
    ...o,
  };
};
const create = (code: string, url: string, extra: Partial<Op> = {}) => op({ kind: 'create', code, url, status: 201, ...extra });
const redirect = (code: string, location: string, start: number, extra: Partial<Op> = {}) =>
  op({ kind: 'redirect', code, status: 302, location, start, ...extra });
const seen = (url: string, state = 'active') => ({
  apiStatus: 200,
  apiUrl: url,
  apiState: state,
  redirectStatus: state === 'active' ? 302 : 404,
  location: state === 'active' ? url : null,
});

function recordOf(ops: Op[], extra: Partial<ChaosRecord> = {}, settled: Partial<ChaosRecord['settled']> = {}): ChaosRecord {
  const clicks: Record<string, number> = {};
  for (const o of ops) if (o.kind === 'redirect' && o.status === 302) clicks[o.code!] = (clicks[o.code!] ?? 0) + 1;
  return {
    config: { seed: 1, mode: 'short', propagationBoundMs: 100, l1TtlMs: 60_000 },
    startedAt: 0,
    endedAt: clock + 100_000,
    ops,
    faults: [],
    ...extra,
    settled: {
      at: clock + 200_000,
      counted: Object.fromEntries(Object.entries(clicks).map(([c, n]) => [c, { minute: n, hour: n, day: n }])),
      incarnations: [{ instance: 'redirect-0', pid: 1, dropped: 0 }],
      links: {},
      ...settled,
    },
  };
}

const fault = (f: Partial<Fault> & Pick<Fault, 'target' | 'start' | 'end'>): Fault => ({ action: 'kill', victim: f.target, downMs: f.end - f.start, ...f });

describe('chaos checker: acknowledged writes', () => {
  it('passes a link whose last acknowledged edit is what the API and the redirect show', () => {
    const ops = [create('c1', URL_A), op({ kind: 'edit', code: 'c1', url: URL_B })];
    expect(checkAcknowledgedWrites(recordOf(ops, {}, { links: { c1: seen(URL_B) } }))).toEqual([]);
  });

  it('finds an acknowledged edit that was undone (the old target shows after the run)', () => {
    const ops = [create('c1', URL_A), op({ kind: 'edit', code: 'c1', url: URL_B })];
    const found = checkAcknowledgedWrites(recordOf(ops, {}, { links: { c1: seen(URL_A) } }));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ invariant: 'acknowledged-writes' });
    expect(found[0].message).toContain('active https://example.com/b');
  });

  it('finds an acknowledged create that is not there after the run', () => {
    const found = checkAcknowledgedWrites(recordOf([create('c1', URL_A)], {}, { links: { c1: { apiStatus: 404, redirectStatus: 404 } } }));
    expect(found.map((v) => v.invariant)).toEqual(['acknowledged-writes']);
  });

  it('finds an acknowledged delete whose link still redirects, and an acknowledged disable that did not hold', () => {
    const ops = [create('d1', URL_A), op({ kind: 'delete', code: 'd1', status: 204 }), create('d2', URL_A), op({ kind: 'disable', code: 'd2' })];
    const found = checkAcknowledgedWrites(recordOf(ops, {}, { links: { d1: seen(URL_A), d2: seen(URL_A) } }));
    expect(found.map((v) => v.message.slice(0, 3))).toEqual(['d1:', 'd2:']);
  });

  it('accepts either state after a write whose outcome is unknown (a 503 may have saved it)', () => {
    const ops = [create('c1', URL_A), op({ kind: 'edit', code: 'c1', url: URL_B, status: 503 })];
    expect(checkAcknowledgedWrites(recordOf(ops, {}, { links: { c1: seen(URL_A) } }))).toEqual([]);
    expect(checkAcknowledgedWrites(recordOf(ops, {}, { links: { c1: seen(URL_B) } }))).toEqual([]);
  });

  it('counts the 201 rows of a batch as acknowledged creates', () => {
    const batch = op({ kind: 'batch', status: 200, rows: [{ code: 'b1', url: URL_A, status: 201 }] });
    expect(checkAcknowledgedWrites(recordOf([batch], {}, { links: {} })).map((v) => v.message)).toEqual([
      'b1: created (acknowledged) but not read back after the run',
    ]);
  });
});

describe('chaos checker: redirect targets', () => {
  it('passes the old target before the propagation bound and the new one after', () => {
    const c = create('c1', URL_A);
    const edit = op({ kind: 'edit', code: 'c1', url: URL_B });
    const ops = [c, edit, redirect('c1', URL_A, edit.end + 50), redirect('c1', URL_B, edit.start + 1), redirect('c1', URL_B, edit.end + 500)];
    expect(checkRedirectTargets(recordOf(ops))).toEqual([]);
  });

  it('finds the old target served after the acknowledgement + the propagation bound', () => {
    const edit = op({ kind: 'edit', code: 'c1', url: URL_B });
    const found = checkRedirectTargets(recordOf([create('c1', URL_A, { start: edit.start - 100 }), edit, redirect('c1', URL_A, edit.end + 150)]));
    expect(found).toHaveLength(1);
    expect(found[0].invariant).toBe('redirect-targets');
  });

  it('reads the target of a link with conversion tracking without its click id (sl_cid), and nothing else of the Location', () => {
    const c = create('c1', URL_A);
    const ok = redirect('c1', `${URL_A}?sl_cid=AAAAAAAAAAAAAAAAAAAAAA`, c.end + 1);
    expect(checkRedirectTargets(recordOf([c, ok]))).toEqual([]);
    expect(checkRedirectTargets(recordOf([c, redirect('c1', `${URL_A}?sl_cid=A&x=1`, c.end + 1)]))).toHaveLength(1);
    expect(checkAcknowledgedWrites(recordOf([c], {}, { links: { c1: { ...seen(URL_A), location: `${URL_A}?sl_cid=B` } } }))).toEqual([]);
  });

  it('finds a target the link never had, and a target given before the edit was sent', () => {
    const c = create('c1', URL_A);
    const edit = op({ kind: 'edit', code: 'c1', url: URL_B });
    const found = checkRedirectTargets(recordOf([c, edit, redirect('c1', 'https://example.com/never', edit.end + 500), redirect('c1', URL_B, c.end + 5)]));
    expect(found).toHaveLength(2);
  });

  it('finds a 302 of a deleted link and of a disabled link after the bound', () => {
    const ops = [create('d1', URL_A), create('d2', URL_A)];
    const del = op({ kind: 'delete', code: 'd1', status: 204 });
    const dis = op({ kind: 'disable', code: 'd2' });
    const found = checkRedirectTargets(
      recordOf([...ops, del, dis, redirect('d1', URL_A, del.end + 101), redirect('d2', URL_A, dis.end + 200), redirect('d2', URL_A, dis.end + 99)]),
    );
    expect(found.map((v) => v.message.slice(0, 3))).toEqual(['d1:', 'd2:']);
  });

  it('allows the old value for the bound under a Redis fault, counted from the master being back, when the fault falls between the answer and the request', () => {
    const edit = op({ kind: 'edit', code: 'c1', url: URL_B });
    const redis = fault({ target: 'redis-master', start: edit.end - 1000, end: edit.end + 2000 });
    const back = redis.end + RECOVERY_MS['redis-master'];
    const withFault = (at: number, f = redis) =>
      checkRedirectTargets(recordOf([create('c1', URL_A, { start: edit.start - 100 }), edit, redirect('c1', URL_A, at)], { faults: [f] }));
    const config = { seed: 1, mode: 'short' as const, propagationBoundMs: 100, l1TtlMs: 60_000, faultBoundMs: 15_000 };
    const checked = (at: number) =>
      checkRedirectTargets({ ...recordOf([create('c1', URL_A, { start: edit.start - 100 }), edit, redirect('c1', URL_A, at)], { faults: [redis] }), config });
    expect(checked(back + 14_000)).toEqual([]);
    expect(checked(back + 16_000)).toHaveLength(1); // the deleted link that lived on (seed 2144239997)
    // A record of before the outbox (no faultBoundMs) was held to the L1 TTL; a fault elsewhere excuses nothing.
    expect(withFault(edit.end + 40_000)).toEqual([]);
    expect(withFault(edit.end + 10_000, fault({ target: 'kafka', start: edit.end - 1000, end: edit.end + 2000 }))).toHaveLength(1);
    // A master cut off from its cluster is a Redis fault too; Kafka cut off from one redirect is not.
    const partition = { ...redis, target: 'redis-partition' as const, action: 'cut' as const };
    expect(
      checkRedirectTargets({
        ...recordOf([create('c1', URL_A, { start: edit.start - 100 }), edit, redirect('c1', URL_A, back + 14_000)], { faults: [partition] }),
        config,
      }),
    ).toEqual([]);
    expect(withFault(edit.end + 10_000, { ...redis, target: 'kafka-link', action: 'cut', victim: 'redirect-0' })).toHaveLength(1);
  });

  it('allows the L1 TTL to an instance that was itself paused between the answer and the request, not to the other', () => {
    const edit = op({ kind: 'edit', code: 'c1', url: URL_B });
    const paused = fault({ target: 'redirect', action: 'pause', victim: 'redirect-0', start: edit.end - 500, end: edit.end + 3000 });
    const late = (instance: string) => redirect('c1', URL_A, edit.end + 30_000, { instance });
    const ops = (instance: string) => [create('c1', URL_A, { start: edit.start - 100 }), edit, late(instance)];
    expect(checkRedirectTargets(recordOf(ops('redirect-0'), { faults: [paused] }))).toEqual([]);
    expect(checkRedirectTargets(recordOf(ops('redirect-1'), { faults: [paused] }))).toHaveLength(1);
  });
});

describe('chaos checker: clicks', () => {
  const ops = () => {
    const c = create('c1', URL_A);
    return [c, redirect('c1', URL_A, c.end + 1), redirect('c1', URL_A, c.end + 2), redirect('c1', URL_A, c.end + 3)];
  };

  it('passes when every 302 is counted once in each rollup', () => {
    expect(checkClicks(recordOf(ops()))).toEqual([]);
  });

  it('finds a click counted twice', () => {
    const found = checkClicks(recordOf(ops(), {}, { counted: { c1: { minute: 4, hour: 4, day: 4 } } }));
    expect(found.map((v) => v.invariant)).toEqual(['clicks-counted-once']);
  });

  it('finds raw visits that disagree with the rollups', () => {
    expect(checkClicks(recordOf(ops(), {}, { counted: { c1: { minute: 3, hour: 3, day: 3, visits: 3 } } }))).toEqual([]);
    expect(checkClicks(recordOf(ops(), {}, { counted: { c1: { minute: 3, hour: 3, day: 3, visits: 2 } } }))[0].message).toContain('2 raw visits, but 3 clicks');
  });

  it('finds rollups that disagree', () => {
    expect(checkClicks(recordOf(ops(), {}, { counted: { c1: { minute: 3, hour: 3, day: 2 } } }))[0].message).toContain('rollups disagree');
  });

  it('finds a 302 that is neither counted nor counted as dropped, and accepts it when the redirect counted it dropped', () => {
    const counted = { c1: { minute: 2, hour: 2, day: 2 } };
    expect(checkClicks(recordOf(ops(), {}, { counted }))[0].message).toContain('1 302s are not counted');
    expect(checkClicks(recordOf(ops(), {}, { counted, incarnations: [{ instance: 'redirect-0', pid: 1, dropped: 1 }] }))).toEqual([]);
    expect(
      checkClicks(
        recordOf(ops(), {}, { counted, incarnations: [{ instance: 'redirect-0', pid: 1, dropped: 0, killedAt: clock, lastScrape: { at: 0, buffer: 1 } }] }),
      ),
    ).toEqual([]);
  });
});

describe('chaos checker: clicks of a SIGKILLed redirect', () => {
  it('counts as at risk its buffer at the last scrape and the 302s it answered from the moment that scrape was sent until the kill', () => {
    const c = create('c1', URL_A);
    const scrape = c.end + 100;
    const killedAt = scrape + 50;
    const ops = [
      c,
      redirect('c1', URL_A, scrape - 30), // ended before the scrape was sent: in the gauge already
      redirect('c1', URL_A, scrape - 5), // ended after: maybe not
      redirect('c1', URL_A, scrape + 20),
      redirect('c1', URL_A, killedAt + 5), // another incarnation's
    ];
    const incarnations = [{ instance: 'redirect-0', pid: 1, dropped: 0, killedAt, lastScrape: { at: scrape, buffer: 3 } }];
    expect(atRiskAtKill(recordOf(ops, {}, { incarnations }))).toBe(5);
    const counted = { c1: { minute: 0, hour: 0, day: 0 } };
    expect(checkClicks(recordOf(ops, {}, { counted, incarnations: [{ ...incarnations[0], lastScrape: { at: scrape, buffer: 0 } }] }))).toHaveLength(1);
  });
});

describe('chaos checker: errors', () => {
  it('finds a 5xx outside every fault window and passes one inside a window + its recovery time', () => {
    const bad = op({ kind: 'edit', code: 'c1', status: 503, contentType: CT });
    const inWindow = fault({ target: 'mariadb', start: bad.start - 5000, end: bad.start - RECOVERY_MS.mariadb + 5 });
    expect(checkErrors(recordOf([bad])).map((v) => v.invariant)).toEqual(['errors']);
    expect(checkErrors(recordOf([bad], { faults: [inWindow] }))).toEqual([]);
    expect(checkErrors(recordOf([bad], { faults: [{ ...inWindow, end: bad.start - RECOVERY_MS.mariadb - 20 }] }))).toHaveLength(1);
  });

  it("excuses an unanswered request during an app instance's fault only on that instance", () => {
    const lost = op({ kind: 'redirect', code: 'c1', status: null, error: 'ECONNREFUSED', instance: 'redirect-1' });
    const f = fault({ target: 'redirect', victim: 'redirect-1', start: lost.start - 100, end: lost.end + 100 });
    expect(checkErrors(recordOf([lost], { faults: [f] }))).toEqual([]);
    expect(checkErrors(recordOf([lost], { faults: [{ ...f, victim: 'redirect-0' }] }))).toHaveLength(1);
  });

  it('excuses the shed answers of an app instance draining what queued while it was stopped, on that instance, just after its fault, and nothing else', () => {
    const shed = op({ kind: 'redirect', code: 'c1', status: 503, contentType: CT, problem: 'OVERLOADED', retryAfter: '1', instance: 'redirect-0' });
    const pause = fault({ target: 'redirect', action: 'pause', victim: 'redirect-0', start: shed.start - 3000, end: shed.start - 11 });
    expect(checkErrors(recordOf([shed], { faults: [pause] }))).toEqual([]);
    expect(checkErrors(recordOf([shed], { faults: [{ ...pause, victim: 'redirect-1' }] }))).toHaveLength(1);
    expect(checkErrors(recordOf([shed], { faults: [{ ...pause, end: shed.start - BACKLOG_DRAIN_MS - 1 }] }))).toHaveLength(1);
    expect(checkErrors(recordOf([{ ...shed, retryAfter: null }], { faults: [pause] }))).toHaveLength(1);
    expect(checkErrors(recordOf([{ ...shed, problem: 'SHARD_UNAVAILABLE' }], { faults: [pause] }))).toHaveLength(1);
    expect(checkErrors(recordOf([shed], { faults: [{ ...pause, target: 'kafka', victim: 'kafka' }] }))).toHaveLength(1);
  });

  it('excuses failures while Kafka is cut off from one redirect on that instance only, and those of a Redis partition everywhere', () => {
    const lost = op({ kind: 'redirect', code: 'c1', status: 503, contentType: CT, instance: 'redirect-1' });
    const kafka = fault({ target: 'kafka-link', action: 'cut', victim: 'redirect-1', start: lost.start - 100, end: lost.end + 100 });
    expect(checkErrors(recordOf([lost], { faults: [kafka] }))).toEqual([]);
    expect(checkErrors(recordOf([lost], { faults: [{ ...kafka, victim: 'redirect-0' }] }))).toHaveLength(1);
    const partition = fault({ target: 'redis-partition', action: 'cut', victim: 'redis-node-7502', start: lost.start - 5000, end: lost.start - 1000 });
    expect(checkErrors(recordOf([lost], { faults: [partition] }))).toEqual([]); // within its recovery time
    expect(checkErrors(recordOf([lost], { faults: [{ ...partition, end: lost.start - RECOVERY_MS['redis-partition'] - 20 }] }))).toHaveLength(1);
  });

  it("excuses a 503 OVERLOADED or DEADLINE_EXCEEDED with Retry-After outside every fault window only while the machine's CPU pressure was high, and holds it to the overload bounds there", () => {
    const calm = Array.from({ length: 40 }, (_, i) => redirect('c1', URL_A, clock + 1000 + i * 20));
    const shed = op({ kind: 'redirect', code: 'c1', status: 503, contentType: CT, problem: 'DEADLINE_EXCEEDED', retryAfter: '1', start: clock + 1500 });
    shed.end = shed.start + 1500;
    const sample = (from: number, some: number) => ({ from, to: from + 1000, some });
    const pressured = { cpuPressure: [sample(shed.start - 1000, 0.95), sample(shed.start, 0.9), sample(shed.start + 1000, 0.3)] };
    const calmMachine = { cpuPressure: pressured.cpuPressure.map((x) => ({ ...x, some: 0.5 })) };
    expect(checkErrors(recordOf([...calm, shed], pressured))).toEqual([]);
    expect(checkErrors(recordOf([...calm, shed], calmMachine))).toHaveLength(1);
    expect(checkErrors(recordOf([...calm, shed]))).toHaveLength(1); // no PSI on this machine: strict
    expect(checkErrors(recordOf([...calm, { ...shed, retryAfter: null }], pressured))).toHaveLength(1);
    expect(checkErrors(recordOf([...calm, { ...shed, problem: 'SHARD_UNAVAILABLE' }], pressured))).toHaveLength(1);
    // Under that pressure the overload bounds hold: an answer after more than 2 s is a violation.
    expect(checkOverload(recordOf([...calm, shed], pressured))).toEqual([]);
    expect(checkOverload(recordOf([...calm, { ...shed, end: shed.start + OVERLOAD.redirectAnswerMs + 1 }], pressured)).map((v) => v.message)).toEqual([
      expect.stringContaining("under the machine's own CPU pressure: answered 503 DEADLINE_EXCEEDED after 2001 ms"),
    ]);
  });

  it('finds an error answer that is not problem+json, even inside a fault window', () => {
    const html = op({ kind: 'redirect', code: 'c1', status: 404, contentType: 'text/html' });
    const found = checkErrors(recordOf([html], { faults: [fault({ target: 'mariadb', start: 0, end: clock + 10_000 })] }));
    expect(found).toHaveLength(1);
    expect(found[0].message).toContain('not problem+json');
  });
});

describe('chaos checker: overload', () => {
  const hogAround = (ops: Op[]) => fault({ target: 'cpu', action: 'hog', start: ops[0].start - 100, end: ops[ops.length - 1].end + 100 });
  const quickRedirects = (n: number, from: number) => Array.from({ length: n }, (_, i) => redirect('c1', URL_A, from + i * 20));

  it('finds an answer slower than its bound under the CPU hog, and passes the same answer outside it', () => {
    const slow = redirect('c1', URL_A, clock + 1000);
    slow.end = slow.start + OVERLOAD.redirectAnswerMs + 1;
    const ops = [...quickRedirects(40, slow.start - 900), slow];
    const found = checkOverload(recordOf(ops, { faults: [hogAround(ops)] }));
    expect(found.map((v) => v.message)).toEqual([expect.stringContaining(`answered 302 after ${OVERLOAD.redirectAnswerMs + 1} ms`)]);
    expect(checkOverload(recordOf(ops))).toEqual([]);
  });

  it("counts the platform's time: the client's own stall during the request is not the platform's", () => {
    const slow = redirect('c1', URL_A, clock + 1000);
    slow.end = slow.start + OVERLOAD.redirectAnswerMs + 400;
    const ops = [...quickRedirects(40, slow.start - 900), slow];
    expect(checkOverload(recordOf(ops, { faults: [hogAround(ops)] }))).toHaveLength(1);
    slow.clientStallMs = 300;
    expect(checkOverload(recordOf(ops, { faults: [hogAround(ops)] }))).toHaveLength(1);
    slow.clientStallMs = 450;
    expect(checkOverload(recordOf(ops, { faults: [hogAround(ops)] }))).toEqual([]);
  });

  it('finds redirects succeeding below the floor under the CPU hog (a 429 is no success), and an unanswered request', () => {
    const ok = quickRedirects(18, clock + 1000);
    const shed = [op({ kind: 'redirect', code: 'c1', status: 503, contentType: CT }), op({ kind: 'redirect', code: 'c1', status: 429, contentType: CT })];
    shed.forEach((o, i) => Object.assign(o, { start: ok[0].start + 5 + i, end: ok[0].start + 15 + i }));
    const found = checkOverload(recordOf([...ok, ...shed], { faults: [hogAround(ok)] }));
    expect(found.map((v) => v.message)).toEqual([expect.stringContaining('18 of 20 redirects succeeded')]);
    const lost = op({ kind: 'create', code: 'c2', status: null, error: 'timeout', start: ok[1].start });
    expect(checkOverload(recordOf([...ok, lost], { faults: [hogAround(ok)] })).map((v) => v.message)).toEqual([expect.stringContaining('no answer (timeout)')]);
  });

  it("during a flood holds the workload's own redirects to the floor, not the flood's, and wants Retry-After on every 503", () => {
    const own = quickRedirects(20, clock + 1000);
    const floodAround = fault({ target: 'flood', action: 'flood', start: own[0].start - 100, end: own[own.length - 1].end + 100 });
    const shedFlood = Array.from({ length: 30 }, (_, i) =>
      Object.assign(op({ kind: 'redirect', code: 'c1', status: 503, contentType: CT, problem: 'OVERLOADED' }), {
        start: own[0].start + i,
        end: own[0].start + i + 3,
        retryAfter: '1',
        flood: true,
      }),
    );
    expect(checkOverload(recordOf([...own, ...shedFlood], { faults: [floodAround] }))).toEqual([]);
    // The same 503s in the workload's own traffic: 20 of 50 succeeded.
    const shedOwn = shedFlood.map((o) => ({ ...o, flood: undefined }));
    expect(checkOverload(recordOf([...own, ...shedOwn], { faults: [floodAround] })).map((v) => v.message)).toEqual([
      expect.stringContaining("20 of 50 of the workload's own redirects succeeded"),
    ]);
    // The flood's own requests: answered late is no violation (their clients are saturated), unanswered is.
    const late = { ...shedFlood[1], end: shedFlood[1].start + OVERLOAD.redirectAnswerMs + 500 };
    expect(checkOverload(recordOf([...own, late], { faults: [floodAround] }))).toEqual([]);
    const lost = { ...shedFlood[2], status: null, error: 'timeout' };
    expect(checkOverload(recordOf([...own, lost], { faults: [floodAround] })).map((v) => v.message)).toEqual([expect.stringContaining('no answer (timeout)')]);
    // A flood request its client sent after the window (it read the end late) is the flood's, not an error of the platform.
    const after = { ...shedFlood[3], start: floodAround.end + 5000, end: floodAround.end + 5100 };
    expect(checkErrors(recordOf([...own, after], { faults: [floodAround] }))).toEqual([]);
    expect(checkErrors(recordOf([...own, { ...after, flood: undefined }], { faults: [floodAround] }))).toHaveLength(1);
    const bare = { ...shedFlood[0], retryAfter: null };
    expect(checkOverload(recordOf([...own, bare], { faults: [floodAround] })).map((v) => v.message)).toEqual([
      expect.stringContaining('503 OVERLOADED without Retry-After'),
    ]);
  });
});

describe('chaos checker: conversions', () => {
  const lead = (code: string, customerId: string, status: number | null, extra: Partial<Op> = {}) =>
    op({ kind: 'lead', code, customerId, status, contentType: status !== null && status >= 400 ? CT : undefined, ...extra });
  const sale = (code: string, customerId: string, invoiceId: string, amount: number, status: number | null, extra: Partial<Op> = {}) =>
    op({ kind: 'sale', code, customerId, invoiceId, amount, status, contentType: status !== null && status >= 400 ? CT : undefined, ...extra });
  const ops = [
    lead('c1', 'u1', 201),
    lead('c1', 'u1', 201, { retry: true }), // sent twice: one lead
    lead('c2', 'u2', 503), // unknown: 0 or 1
    lead('c2', 'u3', 404), // refused: none
    sale('c1', 'u1', 'i1', 500, 201),
    sale('c1', 'u1', 'i1', 500, null, { retry: true }), // the same invoice again: one sale
    sale('c1', 'u1', 'i2', 700, 503),
    sale('c1', 'u1', 'i2', 700, 201, { retry: true }), // unknown, then acknowledged: counted
  ];
  const withCounted = (conversions: Record<string, { leads: number; sales: number; revenue: number }>) => recordOf(ops, {}, { conversions });

  it('passes each lead and sale counted once, retries included, and an unknown outcome counted or not', () => {
    expect(checkConversions(withCounted({ c1: { leads: 1, sales: 2, revenue: 1200 } }))).toEqual([]);
    expect(checkConversions(withCounted({ c1: { leads: 1, sales: 2, revenue: 1200 }, c2: { leads: 1, sales: 0, revenue: 0 } }))).toEqual([]);
  });

  it('finds a sale counted twice (a retried invoiceId), a lost acknowledged lead, and conversions of a link that had none', () => {
    expect(checkConversions(withCounted({ c1: { leads: 1, sales: 3, revenue: 1700 } })).map((v) => v.message)).toEqual([
      expect.stringContaining('c1: 3 sales counted, but 2 acknowledged'),
      expect.stringContaining('c1: 1700 revenue counted, but 1200 acknowledged'),
    ]);
    expect(checkConversions(withCounted({ c1: { leads: 0, sales: 2, revenue: 1200 } })).map((v) => v.message)).toEqual([
      expect.stringContaining('c1: 0 leads counted, but 1 acknowledged'),
    ]);
    expect(checkConversions(withCounted({ c1: { leads: 1, sales: 2, revenue: 1200 }, c3: { leads: 1, sales: 0, revenue: 0 } }))).toHaveLength(1);
    expect(checkConversions(withCounted({ c1: { leads: 1, sales: 2, revenue: 1200 }, c2: { leads: 2, sales: 0, revenue: 0 } }))).toHaveLength(1);
    expect(checkConversions(recordOf(ops)).map((v) => v.message)).toEqual([expect.stringContaining('never read')]);
  });
});

describe('chaos checker: maxClicks', () => {
  it('finds a link that granted more than its limit and allows the unflushed clicks of a Redis fault', () => {
    const c = create('m1', URL_A, { maxClicks: 2 });
    const ops = [c, ...[1, 2, 3].map((i) => redirect('m1', URL_A, c.end + i))];
    expect(checkMaxClicks(recordOf(ops)).map((v) => v.invariant)).toEqual(['max-clicks']);
    expect(checkMaxClicks(recordOf(ops, { faults: [fault({ target: 'redis-master', start: c.end, end: c.end + 10, unflushedClicksBefore: 1 })] }))).toEqual([]);
    expect(checkMaxClicks(recordOf(ops.slice(0, 3)))).toEqual([]);
  });

  it("allows, under a Redis partition, the grants of the window besides the unflushed ones (the old master's count of them is lost)", () => {
    const c = create('m1', URL_A, { maxClicks: 2 });
    const ops = [c, ...[1, 2, 3, 4].map((i) => redirect('m1', URL_A, c.end + i * 100))];
    const partition = (start: number, end: number) => fault({ target: 'redis-partition', action: 'cut', start, end, unflushedClicksBefore: 0 });
    expect(checkMaxClicks(recordOf(ops, { faults: [partition(c.end + 150, c.end + 350)] }))).toEqual([]); // 4 ≤ 2 + the 2 granted in it
    expect(checkMaxClicks(recordOf(ops, { faults: [partition(c.end + 150, c.end + 250)] })).map((v) => v.invariant)).toEqual(['max-clicks']); // 4 > 2 + 1
    expect(checkMaxClicks(recordOf(ops, { faults: [{ ...partition(c.end + 150, c.end + 350), target: 'redis-master', action: 'kill' }] }))).toHaveLength(1);
  });
});

describe('chaos checker: the visitor limit', () => {
  /** `n` GETs of one visitor to `instance`, one every `everyMs` from `from`, the first `allowed` of them 302, the rest 429. */
  const visits = (code: string, instance: string, from: number, n: number, everyMs: number, allowed: number) =>
    Array.from({ length: n }, (_, i) =>
      op({
        kind: 'redirect',
        code,
        instance,
        start: from + i * everyMs,
        status: i < allowed ? 302 : 429,
        location: i < allowed ? URL_A : undefined,
        contentType: i < allowed ? undefined : CT,
      }),
    );
  const MINUTE = 60_000 * 100; // a minute's start, well after the create

  it('passes a visitor within limit + each instance’s requests in one merge interval, and finds one beyond', () => {
    const c = create('v1', URL_A, { clicksPerIpPerMinute: 10 });
    // One request every 100 ms to each instance: 5 of them in a span of 500 ms (the 100 ms interval + 400 ms lateness).
    // One request every 100 ms to each instance: 6 of them may be answered within 500 ms (the 100 ms interval + 400 ms lateness).
    const within = [c, ...visits('v1', 'redirect-0', MINUTE, 30, 100, 11), ...visits('v1', 'redirect-1', MINUTE + 50, 30, 100, 11)];
    expect(checkVisitorLimit(recordOf(within))).toEqual([]);
    const beyond = [c, ...visits('v1', 'redirect-0', MINUTE, 30, 100, 12), ...visits('v1', 'redirect-1', MINUTE + 50, 30, 100, 11)];
    const found = checkVisitorLimit(recordOf(beyond));
    expect(found.map((v) => v.invariant)).toEqual(['visitor-limit']);
    expect(found[0].message).toContain('23 times');
    expect(found[0].message).toContain('10 + [6, 6] requests within 500 ms = 22');
  });

  it('allows each instance the whole limit in a minute with a Redis master fault, and counts a minute apart from the next', () => {
    const c = create('v2', URL_A, { clicksPerIpPerMinute: 10 });
    // One request a second to each instance: the bound is 10 + 1 + 1, each instance alone would give 10.
    const ops = [c, ...visits('v2', 'redirect-0', MINUTE, 12, 1000, 10), ...visits('v2', 'redirect-1', MINUTE + 50, 12, 1000, 10)];
    expect(checkVisitorLimit(recordOf(ops)).map((v) => v.invariant)).toEqual(['visitor-limit']);
    const redis = fault({ target: 'redis-master', start: MINUTE + 5000, end: MINUTE + 8000 });
    expect(checkVisitorLimit(recordOf(ops, { faults: [redis] }))).toEqual([]);
    // The same 20 redirects spread over two minutes: 10 in each.
    const spread = [c, ...visits('v2', 'redirect-0', MINUTE, 10, 1000, 10), ...visits('v2', 'redirect-1', MINUTE + 60_000, 10, 1000, 10)];
    expect(checkVisitorLimit(recordOf(spread))).toEqual([]);
  });

  it('accepts 429 RATE_LIMITED as what a limited link shows after the run', () => {
    const c = create('v3', URL_A, { clicksPerIpPerMinute: 5 });
    const limited = { ...seen(URL_A), redirectStatus: 429, location: null, problem: 'RATE_LIMITED' };
    expect(checkAcknowledgedWrites(recordOf([c], {}, { links: { v3: limited } }))).toEqual([]);
    const other = create('v4', URL_A);
    expect(checkAcknowledgedWrites(recordOf([other], {}, { links: { v4: limited } })).map((v) => v.invariant)).toEqual(['acknowledged-writes']);
  });
});

describe('chaos checker: the verdict', () => {
  it('passes a clean run and fails one with a violation, naming the invariant', () => {
    const c = create('c1', URL_A);
    const clean = recordOf([c, redirect('c1', URL_A, c.end + 1)], {}, { links: { c1: seen(URL_A) } });
    expect(check(clean).passed).toBe(true);
    const broken = { ...clean, settled: { ...clean.settled, links: { c1: seen(URL_B) } } };
    const v = check(broken);
    expect(v.passed).toBe(false);
    expect(v.results.filter((r) => r.violations.length).map((r) => r.name)).toEqual(['acknowledged-writes']);
  });

  it('measures the time to recover from the component being back to the last failure it excuses', () => {
    const f = fault({ target: 'mariadb', start: 10_000, end: 12_000 });
    const failures = [
      op({ kind: 'redirect', code: 'c1', status: 503, contentType: CT, start: 11_000 }),
      op({ kind: 'redirect', code: 'c1', status: 503, contentType: CT, start: 13_000 }),
    ];
    const [s] = faultSummary(recordOf([...failures, op({ kind: 'redirect', code: 'c1', status: 302, location: URL_A, start: 13_500 })], { faults: [f] }));
    expect(s).toMatchObject({ failures: 2, recoveredAfterMs: 1010 });
    expect(s.redirectAvailability).toBeCloseTo(1 / 3);
  });
});
