import { indexedLinkOf, urlHashOf } from './health';
import { ProbeAnswer, ProbeFailure, TargetHttp } from './ports';
import { TargetCheckOptions, TargetChecks } from './target-checks';
import { safetyWorld } from './testing';

/** Targets by URL: a status, or a failure; every request recorded with the clock's time. */
class Targets implements TargetHttp {
  readonly requests: Array<{ at: number; url: string; method: string }> = [];
  constructor(
    private readonly now: () => number,
    readonly answers: Record<string, number | ProbeFailure | ProbeAnswer>,
  ) {}
  async request(url: string, method: 'HEAD' | 'GET'): Promise<ProbeAnswer> {
    this.requests.push({ at: this.now(), url, method });
    const a = this.answers[url] ?? 404;
    if (a instanceof ProbeFailure) throw a;
    return typeof a === 'number' ? { status: a, location: null, retryAfter: null } : a;
  }
}

const HOUR = 3_600_000;
const OPTIONS: TargetCheckOptions = {
  intervalMs: 24 * HOUR,
  retryMs: HOUR,
  failuresToBreak: 2,
  requestsPerSecond: 5,
  hostIntervalMs: 1000,
  maxRedirects: 5,
  concurrency: 4,
};

describe('the scheduled dead-link checks (docs/design.md, "Trust and safety")', () => {
  const setup = async (answers: Record<string, number | ProbeFailure | ProbeAnswer>, options: Partial<TargetCheckOptions> = {}) => {
    const world = safetyWorld();
    const http = new Targets(world.clock.now, answers);
    const checks = new TargetChecks(world.store, http, world.links, world.notices, { ...OPTIONS, ...options }, world.clock, () => 0.5);
    const make = async (url: string, extra: object = {}) => {
      const link = await world.service.create({ tenantId: 't1', url, ...extra });
      await world.store.index([indexedLinkOf(link)], new Date(world.now.t));
      return link;
    };
    return { ...world, http, checks, make };
  };

  it('checks each target once however many links send visitors there, and tells every one of them', async () => {
    const w = await setup({ 'https://shop.example/a': 200 });
    const [one, two] = [await w.make('https://shop.example/a'), await w.make('https://shop.example/a')];
    expect(await w.checks.round()).toBe(1);
    expect(w.http.requests.map((r) => r.url)).toEqual(['https://shop.example/a']);
    for (const link of [one, two]) {
      expect((await w.repo.findByCode(link))?.health).toEqual({
        state: 'ok',
        since: new Date(w.now.t),
        brokenTargets: [],
        lastStatus: 200,
        lastError: null,
        checkedAt: new Date(w.now.t),
      });
    }
    // Due again a day later, give or take 10 % (the random source here gives the middle).
    expect(w.store.targets.get(urlHashOf('https://shop.example/a'))?.nextCheckAt).toEqual(new Date(w.now.t + 24 * HOUR));
    expect(await w.checks.round()).toBe(0);
  });

  it('turns a target broken after two failed checks in a row, retrying sooner in between, and tells the tenant once', async () => {
    const w = await setup({ 'https://shop.example/gone': 404 });
    const link = await w.make('https://shop.example/gone');
    await w.checks.round();
    expect((await w.repo.findByCode(link))?.health ?? null).toBeNull(); // one failure: not broken yet, not checked fine either
    expect(w.store.targets.get(urlHashOf('https://shop.example/gone'))).toMatchObject({ state: 'unchecked', failures: 1, lastStatus: 404 });
    w.now.t += HOUR;
    await w.checks.round();
    const broken = await w.repo.findByCode(link);
    expect(broken?.health).toMatchObject({ state: 'broken', brokenTargets: ['https://shop.example/gone'], lastStatus: 404, since: new Date(w.now.t) });
    expect(broken?.version).toBe(2); // the redirect's view changed: a new version, told to every instance
    expect(w.feed.published).toEqual([{ domain: 'sho.rt', code: link.code, version: 2 }]);
    expect(w.notices.breaks).toEqual([{ code: link.code, targets: ['https://shop.example/gone'] }]);
    // Checked again 2 h later (the retry doubles); still broken: no new version, no second webhook.
    w.now.t += 2 * HOUR;
    await w.checks.round();
    expect((await w.repo.findByCode(link))?.version).toBe(2);
    expect(w.notices.breaks).toHaveLength(1);
    // It answers again: ok, a new version (its visitors go to the target again).
    w.http.answers['https://shop.example/gone'] = 200;
    w.now.t += 4 * HOUR;
    await w.checks.round();
    expect(await w.repo.findByCode(link)).toMatchObject({ version: 3, health: { state: 'ok', brokenTargets: [] } });
  });

  it('a link is broken for the targets that are: a broken variant is listed, the rest still answer', async () => {
    const w = await setup({ 'https://shop.example/a': 200, 'https://other.example/b': 500 }, { failuresToBreak: 1 });
    const link = await w.make('https://shop.example/a', { variants: [{ url: 'https://other.example/b', weight: 1 }] });
    await w.checks.round();
    expect((await w.repo.findByCode(link))?.health).toMatchObject({ state: 'broken', brokenTargets: ['https://other.example/b'], lastStatus: 500 });
  });

  it('keeps to the budget of requests per second, GET retries and redirect hops counted', async () => {
    const answers: Record<string, number | ProbeAnswer> = {};
    for (let i = 0; i < 20; i++) answers[`https://h${i}.example/`] = 200;
    const w = await setup(answers, { requestsPerSecond: 5 });
    for (let i = 0; i < 20; i++) await w.make(`https://h${i}.example/`);
    expect(await w.checks.round()).toBe(5);
    expect(await w.checks.round()).toBe(0); // no time passed: no budget
    w.now.t += 1000;
    expect(await w.checks.round()).toBe(5);
    // A check that takes three requests (HEAD refused, GET, a hop) leaves the budget two short.
    w.http.answers['https://h10.example/'] = { status: 405, location: null, retryAfter: null };
    w.now.t += 400; // 2 requests' worth
    const before = w.http.requests.length;
    await w.checks.round();
    expect(w.http.requests.length - before).toBeGreaterThan(0);
    expect(w.checks.budget).toBeLessThan(1);
    w.now.t += 10_000;
    while (await w.checks.round()) w.now.t += 1000;
    const byTime = w.http.requests.map((r) => r.at);
    const first = byTime[0];
    const last = byTime[byTime.length - 1];
    // 20 targets plus one GET retry at 5 requests a second, from a full bucket: not faster than the budget.
    expect(w.http.requests.length).toBe(21);
    expect(last - first).toBeGreaterThanOrEqual(((21 - 5) / 5) * 1000 - 1000);
  });

  it('checks a host at most once per host interval: another target of it waits its turn without a round of its own', async () => {
    const w = await setup({ 'https://one.example/a': 200, 'https://one.example/b': 200, 'https://two.example/': 200 }, { hostIntervalMs: 5000 });
    await w.make('https://one.example/a');
    await w.make('https://one.example/b');
    await w.make('https://two.example/');
    expect(await w.checks.round()).toBe(2);
    expect(new Set(w.http.requests.map((r) => new URL(r.url).host))).toEqual(new Set(['one.example', 'two.example']));
    const waiting = [...w.store.targets.values()].find((t) => t.state === 'unchecked')!;
    expect(waiting.nextCheckAt).toEqual(new Date(w.now.t + 5000));
    w.now.t += 5000;
    expect(await w.checks.round()).toBe(1);
  });

  it('leaves a host that times out or asks to wait alone for a growing while, without a verdict for "wait"', async () => {
    const w = await setup(
      {
        'https://slow.example/a': new ProbeFailure('timeout', 'no answer'),
        'https://slow.example/b': 200,
        'https://busy.example/': { status: 429, location: null, retryAfter: '600' },
      },
      { failuresToBreak: 3 },
    );
    await w.make('https://slow.example/a');
    const b = await w.make('https://slow.example/b');
    const busy = await w.make('https://busy.example/');
    await w.checks.round();
    // slow.example timed out: its other target waits at least a minute, not the host interval.
    expect(w.store.targets.get(urlHashOf('https://slow.example/b'))?.nextCheckAt.getTime()).toBeGreaterThanOrEqual(w.now.t + 1000);
    w.now.t += 2000;
    await w.checks.round();
    expect(w.http.requests.filter((r) => r.url === 'https://slow.example/b')).toHaveLength(0);
    w.now.t += 60_000;
    await w.checks.round();
    expect((await w.repo.findByCode(b))?.health?.state).toBe('ok');
    // 429 with Retry-After: 600 s: no failure counted, no health written, due again in 10 minutes.
    expect(w.store.targets.get(urlHashOf('https://busy.example/'))).toMatchObject({
      state: 'unchecked',
      failures: 0,
      lastStatus: 429,
      lastError: 'asked-to-wait',
    });
    expect((await w.repo.findByCode(busy))?.health ?? null).toBeNull();
  });

  it('checks the targets of this instance’s new links first, ahead of a backlog of due targets, never twice, within the budget and the host pace', async () => {
    const answers: Record<string, number> = { 'https://new.example/gone': 404, 'https://new.example/ok': 200, 'https://fresh.example/': 200 };
    for (let i = 0; i < 30; i++) answers[`https://old${i}.example/`] = 200;
    const w = await setup(answers, { requestsPerSecond: 5, failuresToBreak: 1 });
    // A backlog made earlier (another instance's links, due for longer).
    for (let i = 0; i < 30; i++) await w.make(`https://old${i}.example/`);
    w.now.t += 60_000;
    const gone = await w.make('https://new.example/gone');
    const ok = await w.make('https://new.example/ok');
    const fresh = await w.make('https://fresh.example/');
    w.checks.queueFirstChecks([gone.id, ok.id, fresh.id]);
    expect(w.checks.firstChecksWaiting).toBe(3);
    // Without the lease: the first checks alone. new.example's second target waits for the host's turn (the rounds find it due).
    expect(await w.checks.firstChecks()).toBe(2);
    expect(w.http.requests.map((r) => r.url)).toEqual(['https://new.example/gone', 'https://fresh.example/']);
    expect((await w.repo.findByCode(gone))?.health).toMatchObject({ state: 'broken', lastStatus: 404 });
    expect(w.notices.breaks).toEqual([{ code: gone.code, targets: ['https://new.example/gone'] }]);
    expect(w.checks.firstChecksWaiting).toBe(0);
    // Queued again (an edit that kept its targets): nothing checked twice.
    w.checks.queueFirstChecks([gone.id, fresh.id]);
    w.now.t += 1000;
    expect(await w.checks.firstChecks()).toBe(0);
    // The lease holder's round takes the first checks before its backlog, and the budget holds over both.
    const later = await w.make('https://fresh.example/later');
    w.checks.queueFirstChecks([later.id]);
    w.now.t += 1000;
    w.http.requests.length = 0;
    expect(await w.checks.round()).toBe(5);
    expect(w.http.requests[0].url).toBe('https://fresh.example/later');
    expect(w.http.requests).toHaveLength(5);
  });

  it('leaves the links past its bound of waiting first checks to the rounds, and keeps the rest for the next tokens', async () => {
    const answers: Record<string, number> = {};
    for (let i = 0; i < 10; i++) answers[`https://n${i}.example/`] = 200;
    const w = await setup(answers, { requestsPerSecond: 2, maxFirstChecks: 4 });
    const links = [];
    for (let i = 0; i < 10; i++) links.push(await w.make(`https://n${i}.example/`));
    w.checks.queueFirstChecks(links.map((l) => l.id));
    expect(w.checks.firstChecksWaiting).toBe(4);
    expect(await w.checks.firstChecks()).toBe(2);
    expect(w.checks.firstChecksWaiting).toBe(2);
    w.now.t += 1000;
    expect(await w.checks.firstChecks()).toBe(2);
    expect(w.checks.firstChecksWaiting).toBe(0);
    expect(w.http.requests.map((r) => r.url)).toEqual([0, 1, 2, 3].map((i) => `https://n${i}.example/`));
  });
});
