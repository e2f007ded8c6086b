import { randomUUID } from 'crypto';
import type { Socket } from 'net';
import { redisClusterNodes as nodes } from '@shortlink/testing';
import { describeCacheStoreAtomicsContract, describeCacheStoreContract } from '../contract/cache-store.contract';
import { RedisClusterOptions, RedisClusterStore } from './redis-cluster-store';

// The contract holds whichever way commands are batched onto the sockets.
for (const writeBatching of ['cork', 'pipeline', 'off'] as const) {
  describeCacheStoreContract(`redis cluster, writeBatching=${writeBatching}`, async () => {
    const store = new RedisClusterStore({ nodes: nodes(), writeBatching });
    await store.ping();
    return store;
  });
}

describeCacheStoreAtomicsContract('redis cluster', async () => new RedisClusterStore({ nodes: nodes() }));

describe('RedisClusterStore write batching on the real cluster', () => {
  /** Issues `count` GETs in one event-loop turn and counts the socket writes each master made. */
  async function writesForOneTurn(writeBatching: RedisClusterOptions['writeBatching'], count: number) {
    const store = new RedisClusterStore({ nodes: nodes(), writeBatching });
    try {
      await store.ping();
      const keys = Array.from({ length: count }, (_, i) => `short:link:batching.test:${randomUUID()}-${i}`);
      await Promise.all(keys.map((k, i) => store.set(k, `v${i}`, 60_000)));
      const masters = store.client.nodes('master');
      let writes = 0;
      for (const node of masters) {
        const socket = node.stream as Socket & { _write: Socket['_write']; _writev?: Socket['_writev'] };
        const write = socket._write.bind(socket);
        const writev = socket._writev?.bind(socket);
        socket._write = (...args) => (writes++, write(...args));
        if (writev) socket._writev = (...args) => (writes++, writev(...args));
      }
      const values = await Promise.all(keys.map((k) => store.get(k)));
      return { writes, masters: masters.length, values, expected: keys.map((_, i) => `v${i}`) };
    } finally {
      await store.close();
    }
  }

  it('cork: the GETs of one turn leave as at most one write per master, each answered with its own value', async () => {
    const r = await writesForOneTurn('cork', 200);
    expect(r.values).toEqual(r.expected);
    expect(r.writes).toBeGreaterThan(0);
    expect(r.writes).toBeLessThanOrEqual(r.masters);
  });

  it('off: every GET is its own socket write (the baseline cork improves on)', async () => {
    const r = await writesForOneTurn('off', 200);
    expect(r.values).toEqual(r.expected);
    expect(r.writes).toBe(200);
  });
});
