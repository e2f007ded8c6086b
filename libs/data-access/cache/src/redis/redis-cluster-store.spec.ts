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
    const store = new RedisClusterStore({ nodes: [{ host: '127.0.0.1', port: await closedPort() }], commandTimeoutMs: 200 });
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
        await expect(op()).rejects.toThrow();
        expect(Date.now() - started).toBeLessThan(1500);
      }
    } finally {
      store.client.disconnect();
    }
  });
});
