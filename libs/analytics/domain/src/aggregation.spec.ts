import { cityValueOf, DimensionValue, MAX_VALUES_PER_MINUTE, minuteOf, NONE, OTHER, RollupRow, rollupsOf } from './aggregation';
import { ClickEvent } from './click-event';
import { countedOf, Facts } from './testing/counted-clicks';

const T = Date.UTC(2026, 11, 7, 10, 0, 5);
let seq = 0;
const click = (over: Partial<ClickEvent> = {}): ClickEvent => ({
  producer: 'p1',
  seq: seq++,
  kind: 'click',
  occurredAt: T,
  tenantId: 't1',
  linkId: '1',
  domain: 'sho.rt',
  code: 'abc',
  visitor: 1,
  country: 'DE',
  region: null,
  city: null,
  source: 'link',
  refererHost: null,
  userAgent: 'UA',
  variant: null,
  ...over,
});

/** Deterministic pseudo-random numbers (a test must fail the same way twice). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

type Tally = Map<string, { clicks: number; visitors: Set<number> }>;
const tally = (t: Tally, key: string, clicks: number, visitors: Iterable<number>) => {
  const entry = t.get(key) ?? { clicks: 0, visitors: new Set<number>() };
  entry.clicks += clicks;
  for (const v of visitors) entry.visitors.add(v);
  t.set(key, entry);
};
const sorted = (t: Tally) =>
  [...t].map(([k, v]) => [k, v.clicks, [...v.visitors].sort((a, b) => a - b)]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));

/** What the rows say per link (`link`) and per dimension value (`dim`): a shared value counts as the link row's clicks and visitors. */
function expand(rows: readonly RollupRow[]): Tally {
  const t: Tally = new Map();
  for (const r of rows) {
    const at = `${r.tenantId}|${r.domain}|${r.code}|${r.minute}|${r.bot}`;
    if (r.link) tally(t, `link ${at}`, r.clicks, r.visitors);
    for (const v of r.values) tally(t, `dim ${at}|${v.dimension}|${v.value}`, r.clicks, r.visitors);
    expect(new Set(r.visitors).size).toBe(r.visitors.length);
  }
  return t;
}

/** The same, click by click, straight from the events (no caps reached in these specs). */
function reference(events: readonly ClickEvent[], factsOf: (e: ClickEvent) => Facts): Tally {
  const t: Tally = new Map();
  for (const e of events) {
    const f = factsOf(e);
    const orphan = e.kind === 'orphan';
    const at = `${orphan ? '' : e.tenantId}|${e.domain}|${e.code}|${minuteOf(e.occurredAt)}|${f.bot}`;
    tally(t, `link ${at}`, 1, [e.visitor]);
    if (orphan) continue;
    const values: DimensionValue[] = [
      { dimension: 'countries', value: e.country ?? NONE },
      { dimension: 'referers', value: e.refererHost ?? NONE },
      { dimension: 'devices', value: f.device },
      { dimension: 'browsers', value: f.browser },
      { dimension: 'os', value: f.os },
      { dimension: 'variants', value: e.variant === null ? NONE : String(e.variant) },
      { dimension: 'sources', value: e.source },
      { dimension: 'cities', value: cityValueOf(e) },
    ];
    for (const v of values) tally(t, `dim ${at}|${v.dimension}|${v.value}`, 1, [e.visitor]);
  }
  return t;
}

describe('rollupsOf (docs/design.md, "Analytics")', () => {
  it('folds clicks per link, minute and bot flag with every dimension value, its clicks and its visitors, as counting them one by one does', () => {
    const next = random(35);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)];
    const events = Array.from({ length: 3000 }, () => {
      const orphan = next() < 0.05;
      return click({
        kind: orphan ? 'orphan' : 'click',
        tenantId: orphan ? '' : pick(['t1', 't2']),
        domain: pick(['sho.rt', 'go.example']),
        code: pick(['a', 'b', 'c', 'd']),
        occurredAt: T + Math.floor(next() * 3) * 60_000 + Math.floor(next() * 1000),
        visitor: Math.floor(next() * 200),
        country: pick(['DE', 'FR', null]),
        region: pick(['Bayern', null]),
        city: pick(['München', null]),
        source: pick(['qr', 'link'] as const),
        refererHost: pick([null, 'news.example', 'mail.example']),
        userAgent: pick(['UA1', 'UA2', 'bot']),
        variant: pick([null, 0, 1]),
      });
    });
    const factsOf = (e: ClickEvent): Facts =>
      e.userAgent === 'bot'
        ? { device: 'bot', browser: 'Slackbot', os: 'other', bot: true }
        : { device: e.userAgent === 'UA1' ? 'desktop' : 'mobile', browser: 'Chrome', os: e.userAgent === 'UA1' ? 'Windows' : 'Android', bot: false };
    const rows = rollupsOf(countedOf(events, factsOf));
    expect(sorted(expand(rows))).toEqual(sorted(reference(events, factsOf)));
    // A value of a dimension appears once per link, minute and bot flag: on the link's row or in a row of its own.
    const seen = new Set<string>();
    for (const r of rows) {
      for (const v of r.values) {
        const key = `${r.tenantId}|${r.domain}|${r.code}|${r.minute}|${r.bot}|${v.dimension}|${v.value}`;
        expect(seen.has(key)).toBe(false);
        seen.add(key);
      }
    }
  });

  it("names on the link's row the values every click shares, gives a dimension with several values rows of their own, and those rows the visitors of their own clicks only", () => {
    const events = [
      click({ visitor: 1 }),
      click({ visitor: 2 }),
      click({ visitor: 1, refererHost: 'news.example' }),
      click({ visitor: 3, refererHost: 'news.example', country: 'FR' }),
    ];
    const rows = rollupsOf(countedOf(events));
    const link = rows.find((r) => r.link)!;
    expect(link).toMatchObject({ tenantId: 't1', code: 'abc', minute: minuteOf(T), bot: false, clicks: 4, visitors: [1, 2, 3] });
    expect(link.values.map((v) => v.dimension)).toEqual(['devices', 'browsers', 'os', 'variants', 'sources', 'cities']);
    const own = rows.filter((r) => !r.link).map((r) => [r.values, r.clicks, r.visitors]);
    expect(own).toEqual([
      [[{ dimension: 'countries', value: 'DE' }], 3, [1, 2]],
      [[{ dimension: 'countries', value: 'FR' }], 1, [3]],
      [[{ dimension: 'referers', value: NONE }], 2, [1, 2]],
      [[{ dimension: 'referers', value: 'news.example' }], 2, [1, 3]],
    ]);
  });

  it('keeps orphans under no tenant and without dimensions, their codes capped per domain and minute, and referers capped per link and minute', () => {
    const orphans = Array.from({ length: MAX_VALUES_PER_MINUTE + 5 }, (_, i) => click({ kind: 'orphan', tenantId: '', code: `probe${i}`, visitor: i }));
    const referred = Array.from({ length: MAX_VALUES_PER_MINUTE + 3 }, (_, i) => click({ code: 'hot', refererHost: `r${i}.example`, visitor: 1 }));
    const rows = rollupsOf(countedOf([...orphans, ...referred]));
    const orphanRows = rows.filter((r) => r.tenantId === '');
    expect(orphanRows.every((r) => r.link && r.values.length === 0)).toBe(true);
    expect(orphanRows.map((r) => r.code)).toContain(OTHER);
    expect(orphanRows.find((r) => r.code === OTHER)).toMatchObject({ clicks: 5, visitors: [100, 101, 102, 103, 104] });
    expect(new Set(orphanRows.map((r) => r.code)).size).toBe(MAX_VALUES_PER_MINUTE + 1);
    const referers = rows.filter((r) => r.code === 'hot' && !r.link && r.values[0].dimension === 'referers');
    expect(referers).toHaveLength(MAX_VALUES_PER_MINUTE + 1);
    expect(referers.find((r) => r.values[0].value === OTHER)?.clicks).toBe(3);
  });

  it('folds only the clicks at the positions given', () => {
    const events = [click({ visitor: 1 }), click({ visitor: 2, code: 'xyz' }), click({ visitor: 3 })];
    const rows = rollupsOf(countedOf(events), Int32Array.from([0, 2]));
    expect(rows.filter((r) => r.link).map((r) => [r.code, r.clicks, r.visitors])).toEqual([['abc', 2, [1, 3]]]);
  });
});
