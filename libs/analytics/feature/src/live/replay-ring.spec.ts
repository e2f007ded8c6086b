import { ReplayRing } from './replay-ring';

describe('ReplayRing', () => {
  let now = 1_000_000;
  const ring = (max: number, ageMs = 60_000) => new ReplayRing<{ seq: number; at: number }>(max, ageMs, () => now);
  const push = (r: ReplayRing<{ seq: number; at: number }>, ...seqs: number[]) => seqs.forEach((seq) => r.push({ seq, at: now }));
  const seqs = (entries: ReadonlyArray<{ seq: number }>) => entries.map((e) => e.seq);

  beforeEach(() => (now = 1_000_000));

  it('replays the entries after a position, oldest first, with no gap while they are all held', () => {
    const r = ring(5);
    push(r, 1, 2, 3, 4);
    expect(r.after(1)).toEqual({
      entries: [expect.objectContaining({ seq: 2 }), expect.objectContaining({ seq: 3 }), expect.objectContaining({ seq: 4 })],
      gap: false,
    });
    expect(r.after(4)).toEqual({ entries: [], gap: false });
    expect(r.after(0).gap).toBe(false);
  });

  it('keeps the last maxEntries (a circular buffer) and reports a gap for a position before them', () => {
    const r = ring(3);
    push(r, 1, 2, 3, 4, 5, 6, 7);
    expect(seqs(r.all())).toEqual([5, 6, 7]);
    expect(r.after(4)).toEqual({ entries: r.all(), gap: false });
    const before = r.after(3);
    expect({ seqs: seqs(before.entries), gap: before.gap }).toEqual({ seqs: [5, 6, 7], gap: true });
    expect(r.lastSeq).toBe(7);
  });

  it('drops entries older than the window, and a position before them has a gap', () => {
    const r = ring(100, 10_000);
    push(r, 1, 2);
    now += 6000;
    push(r, 3);
    now += 5000; // 1 and 2 are 11 s old
    expect(seqs(r.all())).toEqual([3]);
    expect(r.length).toBe(1);
    expect(r.after(1).gap).toBe(true);
    expect(r.after(2)).toEqual({ entries: [expect.objectContaining({ seq: 3 })], gap: false });
    now += 10_000;
    const empty = r.after(2);
    expect({ n: empty.entries.length, gap: empty.gap }).toEqual({ n: 0, gap: true });
  });

  it('holds nothing with a window of 0 entries: every resume behind the last is a gap', () => {
    const r = ring(0);
    push(r, 1, 2);
    expect(r.all()).toEqual([]);
    expect(r.after(1)).toEqual({ entries: [], gap: true });
    expect(r.after(2)).toEqual({ entries: [], gap: false });
  });

  it('refuses a sequence number that does not grow', () => {
    const r = ring(3);
    push(r, 5);
    expect(() => push(r, 5)).toThrow(RangeError);
  });
});
