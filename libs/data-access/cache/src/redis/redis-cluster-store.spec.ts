import { createServer } from 'net';
import { RedisClusterStore } from './redis-cluster-store';

/** A port with nobody listening: what every node of a stopped cluster looks like. */
async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

describe('RedisClusterStore with every node unreachable', () => {
  it('fails each command within its deadline instead of queueing until Redis returns', async () => {
    const port = await closedPort();
    // The deadline on the fake clock (the refused connections are real): a command fails by 200 ms of the
    // clock, however slowly a loaded machine gets there.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    const store = new RedisClusterStore({ nodes: [{ host: '127.0.0.1', port }], commandTimeoutMs: 200 });
    try {
      for (const op of [
        () => store.get('k'),
        () => store.set('k', 'v'),
        () => store.setIfAbsent('l', 't', 1000),
        () => store.incrBy('c', 1, 1000),
        () => store.getBits('b', [1]),
        () => store.ping(),
      ]) {
        const started = Date.now();
        let waitedMs: number | undefined;
        const failed = op().then(
          () => 'answered',
          (error: unknown) => ((waitedMs = Date.now() - started), error),
        );
        while (waitedMs === undefined && Date.now() - started < 5000) {
          await new Promise((r) => setImmediate(r));
          if (waitedMs === undefined) await jest.advanceTimersByTimeAsync(10);
        }
        expect(await failed).toBeInstanceOf(Error);
        expect(waitedMs).toBeLessThanOrEqual(200);
      }
    } finally {
      store.client.disconnect();
      jest.useRealTimers();
    }
  });
});
