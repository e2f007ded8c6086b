import { CheckSlot, PasswordCheckGate } from './password-check-gate';

/** A check that runs until the test ends it, as an argon2 call on the thread pool would. */
function check(gate: PasswordCheckGate, tenant: string, visitor: string, log: string[], now = 0) {
  let end: () => void = () => undefined;
  const slot = gate.acquire(tenant, visitor, now).then((s: CheckSlot) => {
    log.push(s.allowed ? `${tenant}:${visitor}` : `${tenant}:${visitor}:${s.reason}`);
    if (s.allowed) end = () => s.done();
    return s;
  });
  return { slot, end: () => end() };
}
const turn = () => new Promise((r) => setImmediate(r));

describe('PasswordCheckGate', () => {
  it('serves waiting checks round-robin by tenant: a tenant flooding the slots delays another by one check, never refuses it', async () => {
    const gate = new PasswordCheckGate({ concurrency: 2, perVisitorPerMinute: 0, waitingPerTenant: 100 });
    const log: string[] = [];
    // Tenant A's crowd holds both slots with 20 more waiting; then one visitor of tenant B arrives.
    const a = Array.from({ length: 22 }, (_, i) => check(gate, 'A', `a${i}`, log));
    const b = check(gate, 'B', 'b0', log);
    await turn();
    expect(log).toEqual(['A:a0', 'A:a1']);
    expect(gate.usage).toEqual({ running: 2, waiting: 21 });
    a[0].end();
    await turn();
    a[1].end();
    await turn();
    // One of A's waiting checks had its turn first (A was waiting before B), then B at the next free slot.
    expect(log).toEqual(['A:a0', 'A:a1', 'A:a2', 'B:b0']);
    for (let i = 0; i < 25; i++) {
      for (const c of [...a, b]) c.end();
      await turn();
    }
    expect(gate.usage).toEqual({ running: 0, waiting: 0 });
    expect(log).toHaveLength(23);
  });

  it('alternates between tenants that both wait', async () => {
    const gate = new PasswordCheckGate({ concurrency: 1, perVisitorPerMinute: 0, waitingPerTenant: 100 });
    const log: string[] = [];
    const checks = [...[0, 1, 2, 3].map((i) => check(gate, 'A', `a${i}`, log)), ...[0, 1, 2].map((i) => check(gate, 'B', `b${i}`, log))];
    for (let i = 0; i < checks.length; i++) {
      await turn();
      for (const c of checks) c.end();
    }
    await turn();
    expect(log).toEqual(['A:a0', 'A:a1', 'B:b0', 'A:a2', 'B:b1', 'A:a3', 'B:b2']);
  });

  it('spends a visitor budget per minute on every check, right passwords included', async () => {
    const gate = new PasswordCheckGate({ concurrency: 4, perVisitorPerMinute: 3 });
    const log: string[] = [];
    for (let i = 0; i < 5; i++) {
      const c = check(gate, 'A', 'v', log, 1000);
      await c.slot;
      c.end(); // each finished before the next: only the budget can refuse
    }
    expect(log).toEqual(['A:v', 'A:v', 'A:v', 'A:v:visitor', 'A:v:visitor']);
    const refused = await gate.acquire('A', 'v', 1000);
    expect(refused).toMatchObject({ allowed: false, reason: 'visitor', retryAfterSeconds: 59 });
    expect((await gate.acquire('B', 'w', 1000)).allowed).toBe(true); // another visitor is not held back
    expect((await gate.acquire('A', 'v', 61_000)).allowed).toBe(true); // the next minute
  });

  it("refuses at once beyond a tenant's waiting room, and after the longest wait", async () => {
    jest.useFakeTimers();
    try {
      const gate = new PasswordCheckGate({ concurrency: 1, perVisitorPerMinute: 0, waitingPerTenant: 2, maxWaitMs: 500 });
      const log: string[] = [];
      const holder = check(gate, 'A', 'a0', log);
      const waiting = [check(gate, 'A', 'a1', log), check(gate, 'A', 'a2', log)];
      const beyond = await gate.acquire('A', 'a3');
      expect(beyond).toMatchObject({ allowed: false, reason: 'busy' });
      expect(await Promise.race([gate.acquire('B', 'b0'), Promise.resolve('waiting')])).toBe('waiting'); // B has a room of its own
      jest.advanceTimersByTime(500);
      await Promise.all(waiting.map((w) => w.slot));
      expect(log).toEqual(['A:a0', 'A:a1:busy', 'A:a2:busy']);
      holder.end();
      expect(gate.usage.waiting).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });
});
