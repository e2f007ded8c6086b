import { SendBatcher } from './send-batcher';

/** A producer whose sends wait until the test acknowledges (or fails) them, in order; it records what each carried. */
function gatedProducer() {
  const sends: string[][] = [];
  const pending: Array<{ ack: () => void; fail: (e: Error) => void }> = [];
  const send = (messages: string[]) =>
    new Promise<void>((resolve, reject) => {
      sends.push([...messages]);
      pending.push({ ack: resolve, fail: reject });
    });
  const settle = async (how: 'ack' | Error) => {
    await tick();
    const next = pending.shift();
    if (!next) throw new Error('no send in flight');
    if (how === 'ack') next.ack();
    else next.fail(how);
    await tick();
  };
  return { sends, send, settle, inFlight: () => pending.length };
}

/** Lets the current event-loop turn end (the batcher sends at its end) and the settled callers run. */
const tick = async () => {
  for (let i = 0; i < 3; i++) await new Promise<void>((r) => setImmediate(r));
};

/** Each caller's outcome, as it settles. */
function outcomes() {
  const seen: string[] = [];
  const track = (name: string, p: Promise<void>) =>
    p.then(
      () => void seen.push(`${name}:ok`),
      (e: Error) => void seen.push(`${name}:${e.message}`),
    );
  return { seen, track };
}

describe('SendBatcher', () => {
  it('sends the callers of one event-loop turn together at its end', async () => {
    const producer = gatedProducer();
    const batcher = new SendBatcher<string>({ send: producer.send });
    const { seen, track } = outcomes();
    const all = [track('a', batcher.send(['a'])), track('b', batcher.send(['b1', 'b2'])), track('c', batcher.send(['c']))];
    await Promise.resolve();
    expect(producer.sends).toEqual([]); // not before the turn ends
    await tick();
    expect(producer.sends).toEqual([['a', 'b1', 'b2', 'c']]);
    await producer.settle('ack');
    await Promise.all(all);
    expect(seen).toEqual(['a:ok', 'b:ok', 'c:ok']);
    expect(batcher.counts).toEqual({ writes: 1, items: 3 });
  });

  it('sends a lone caller at its turn’s end, and the callers that arrive while the sends are in flight together in the next send, in arrival order', async () => {
    const producer = gatedProducer();
    const batcher = new SendBatcher<string>({ send: producer.send, concurrency: 1 });
    const { seen, track } = outcomes();
    const first = track('a', batcher.send(['a']));
    await tick();
    expect(producer.sends).toEqual([['a']]);
    const rest = [track('b', batcher.send(['b1', 'b2']))];
    await tick();
    rest.push(track('c', batcher.send(['c'])), track('d', batcher.send(['d'])));
    await tick();
    expect(producer.sends).toEqual([['a']]); // they wait for the send in flight
    await producer.settle('ack');
    expect(seen).toEqual(['a:ok']); // b, c and d wait for their own send's acks
    expect(producer.sends).toEqual([['a'], ['b1', 'b2', 'c', 'd']]);
    await producer.settle('ack');
    await Promise.all([first, ...rest]);
    expect(seen).toEqual(['a:ok', 'b:ok', 'c:ok', 'd:ok']);
    expect(batcher.counts).toEqual({ writes: 2, items: 4 });
  });

  it('fails each caller of a failed send, and only those: the next send goes on', async () => {
    const producer = gatedProducer();
    const batcher = new SendBatcher<string>({ send: producer.send, concurrency: 1 });
    const { seen, track } = outcomes();
    const all = [track('a', batcher.send(['a']))];
    await tick();
    all.push(track('b', batcher.send(['b'])), track('c', batcher.send(['c'])));
    await producer.settle('ack');
    all.push(track('d', batcher.send(['d'])));
    await producer.settle(new Error('not enough in-sync replicas'));
    await producer.settle('ack');
    await Promise.all(all);
    expect(producer.sends).toEqual([['a'], ['b', 'c'], ['d']]);
    expect(seen).toEqual(['a:ok', 'b:not enough in-sync replicas', 'c:not enough in-sync replicas', 'd:ok']);
  });

  it('sends every message exactly once, none twice, none after a failure (the caller retries), never splitting a caller', async () => {
    const producer = gatedProducer();
    const batcher = new SendBatcher<string>({ send: producer.send, concurrency: 2, maxCallers: 3 });
    const { track } = outcomes();
    const submitted: string[] = [];
    const all: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) {
      const messages = i % 4 === 0 ? [`m${i}a`, `m${i}b`] : [`m${i}`];
      submitted.push(...messages);
      all.push(track(`c${i}`, batcher.send(messages)));
    }
    await tick();
    expect(producer.inFlight()).toBe(2); // two sends at once at most
    let n = 0;
    while (producer.inFlight()) await producer.settle(n++ % 3 === 1 ? new Error('broker down') : 'ack');
    await Promise.all(all);
    const sent = producer.sends.flat();
    expect(sent).toEqual(submitted); // in order, each once
    for (const s of producer.sends) {
      expect(s.filter((m) => !m.endsWith('b')).length).toBeLessThanOrEqual(3); // at most maxCallers callers a send
      for (const m of s) if (m.endsWith('a')) expect(s).toContain(m.replace(/a$/, 'b')); // a caller's messages go together
    }
  });

  it('fails the callers of a send that throws at once, and goes on', async () => {
    let calls = 0;
    const batcher = new SendBatcher<string>({
      send: (messages) => {
        if (calls++ === 0) throw new Error('producer closed');
        return Promise.resolve(void messages);
      },
    });
    await expect(batcher.send(['a'])).rejects.toThrow('producer closed');
    await expect(batcher.send(['b'])).resolves.toBeUndefined();
  });

  it('answers an empty send without a request', async () => {
    const producer = gatedProducer();
    const batcher = new SendBatcher<string>({ send: producer.send });
    await batcher.send([]);
    expect(producer.sends).toEqual([]);
  });
});
