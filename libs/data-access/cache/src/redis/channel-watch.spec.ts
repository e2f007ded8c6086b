import { ChannelWatch } from './channel-watch';

/** A subscriber's view of the numbered, heartbeating change channel, step by step (docs/design.md, "Edits reach every instance"). */
describe('ChannelWatch', () => {
  const watch = (t0 = 0) => {
    const w = new ChannelWatch({ reorderMs: 1000, silenceMs: 3500 });
    w.reset(t0);
    return w;
  };

  it('is quiet while every number of every publisher arrives, in order or crossed within the reorder window', () => {
    const w = watch();
    for (let n = 1; n <= 5; n++) w.heard('gen-a', n, n * 100);
    w.heard('gen-b', 1, 150);
    w.heard('gen-b', 3, 600);
    w.heard('gen-b', 2, 900); // crossed on the way (two cluster nodes)
    expect(w.check(1000)).toBe('ok');
    w.heard('gen-a', 7, 1200);
    w.heard('gen-a', 6, 2100); // 900 ms late: still within the window
    expect(w.check(2200)).toBe('ok');
  });

  it('reports a gap once a number stays missing beyond the reorder window, and counts on from the highest heard', () => {
    const w = watch();
    w.heard('gen-a', 1, 0);
    w.heard('gen-a', 3, 100);
    expect(w.check(1000)).toBe('ok');
    expect(w.check(1101)).toBe('gap');
    expect(w.check(1200)).toBe('ok'); // reported once
    w.heard('gen-a', 4, 1300);
    w.heard('gen-a', 2, 1400); // too late: already reported, changes nothing
    expect(w.check(3000)).toBe('ok');
  });

  it('reports a gap for a publisher first heard past its first message after a whole silence of this subscription (its messages were missed)', () => {
    const w = watch(10_000);
    w.heard('gen-new', 1, 12_000); // started after us: its first message
    expect(w.check(12_100)).toBe('ok');
    w.heard('gen-old', 57, 12_500); // speaking all along: heard only now
    expect(w.check(13_000)).toBe('ok'); // within the first silence: we may simply have subscribed in between
    w.heard('gen-late', 9, 14_000);
    expect(w.check(14_100)).toBe('gap');
  });

  it('says silent when no known publisher was heard for the silence window, and forgets one that stopped while others speak', () => {
    const w = watch();
    w.heard('gen-a', 1, 0);
    w.heard('gen-b', 1, 0);
    for (let t = 1000; t <= 5000; t += 1000) w.heard('gen-b', t / 1000 + 1, t);
    expect(w.check(5000)).toBe('ok'); // gen-a stopped: forgotten, not a silence
    w.heard('gen-a', 2, 5100); // back after a pause: a silence cannot tell a pause from lost messages, so it counts as a gap
    expect(w.check(5200)).toBe('gap');
    expect(w.check(8600)).toBe('ok');
    expect(w.check(8601)).toBe('silent');
    w.reset(9000);
    expect(w.check(20_000)).toBe('ok'); // nobody known: nothing to miss
  });
});
