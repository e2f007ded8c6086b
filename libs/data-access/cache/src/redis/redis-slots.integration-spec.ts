import { redisClusterNodes as nodes } from '@shortlink/testing';
import { describeSlotsContract } from '../contract/slots.contract';
import { RedisClusterStore } from './redis-cluster-store';
import { RedisSlots } from './redis-slots';

describeSlotsContract('redis cluster', async () => {
  const cache = new RedisClusterStore({ nodes: nodes() });
  await cache.ping();
  return { store: new RedisSlots(cache), close: () => cache.close() };
});

describe('RedisSlots', () => {
  it('fails within its deadline when the cluster does not answer (batches are then counted per instance)', async () => {
    const cache = new RedisClusterStore({ nodes: [{ host: '127.0.0.1', port: 1 }], commandTimeoutMs: 5000 });
    await expect(new RedisSlots(cache, 200).acquire('k', 'h', 1, 10_000)).rejects.toThrow(/within 200 ms/);
    await cache.close();
  });
});
