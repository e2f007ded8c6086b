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

describe('RedisClusterStore.dropNullsAndSetBits on the real cluster', () => {
  it('sends one script per master, and falls back to per-key commands when a node does not serve the slots it was sent', async () => {
    const store = new RedisClusterStore({ nodes: nodes() });
    try {
      await store.ping();
      const keys = Array.from({ length: 40 }, (_, i) => `short:link:dsb.test:${randomUUID()}-${i}`);
      const bitmap = `short:bloom:dsb.test:${randomUUID()}`;
      await Promise.all(keys.map((k) => store.set(k, '', 60_000)));
      const masters = store.client.nodes('master');
      const evals: string[] = [];
      for (const node of masters) {
        const original = node.eval.bind(node) as (...args: unknown[]) => Promise<unknown>;
        (node as unknown as { eval: (...args: unknown[]) => Promise<unknown> }).eval = (...args: unknown[]) => (
          evals.push(`${node.options.port}`),
          original(...args)
        );
      }
      await store.dropNullsAndSetBits(keys, [{ key: bitmap, offsets: [3, 9] }]);
      expect(evals.length).toBeLessThanOrEqual(masters.length);
      expect(new Set(evals).size).toBe(evals.length);
      expect(await Promise.all(keys.map((k) => store.get(k)))).toEqual(keys.map(() => null));
      expect(await store.getBits(bitmap, [3, 4, 9])).toEqual([1, 0, 1]);

      // Every slot pointed at the wrong master (as while slots move): the scripts are refused, the keys still go.
      await Promise.all(keys.map((k) => store.set(k, '', 60_000)));
      const cluster = store.client as unknown as { slots: string[][] };
      const real = cluster.slots;
      const names = masters.map((n) => `${n.options.host}:${n.options.port}`);
      cluster.slots = real.map((owners) => [names[(names.indexOf(owners[0]) + 1) % names.length]]);
      try {
        await store.dropNullsAndSetBits(keys, [{ key: bitmap, offsets: [4] }]);
      } finally {
        cluster.slots = real;
      }
      expect(await Promise.all(keys.map((k) => store.get(k)))).toEqual(keys.map(() => null));
      expect(await store.getBits(bitmap, [3, 4, 9])).toEqual([1, 1, 1]);
      await store.del([bitmap]);
    } finally {
      await store.close();
    }
  });
});

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
