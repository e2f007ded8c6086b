import { redisClusterNodes as nodes } from '@shortlink/testing';
import { describeRateWindowsContract } from '../contract/rate-windows.contract';
import { RedisClusterStore } from './redis-cluster-store';
import { RedisRateWindows } from './redis-rate-windows';

describeRateWindowsContract('redis cluster', async () => {
  const cache = new RedisClusterStore({ nodes: nodes() });
  await cache.ping();
  return { store: new RedisRateWindows(cache), close: () => cache.close() };
});

describe('RedisRateWindows', () => {
  it('goes on counting when a node lost its scripts (EVALSHA answered NOSCRIPT: ioredis sends the script again)', async () => {
    const cache = new RedisClusterStore({ nodes: nodes() });
    await cache.ping();
    const windows = new RedisRateWindows(cache);
    const key = `noscript-${Date.now()}-${Math.random()}`;
    expect(await windows.hit(key, 10, 60_000, 1)).toMatchObject({ allowed: true, used: 1 });
    // What a restarted node or a promoted replica would be: no script cached (every other user of EVALSHA reloads too).
    await Promise.all(cache.client.nodes('master').map((node) => node.script('FLUSH')));
    expect(await windows.hit(key, 10, 60_000, 1)).toMatchObject({ allowed: true, used: 2 });
    await cache.close();
  });

  it('fails within its deadline when the cluster does not answer (the limiter then counts locally)', async () => {
    const cache = new RedisClusterStore({ nodes: [{ host: '127.0.0.1', port: 1 }], commandTimeoutMs: 5000 });
    await expect(new RedisRateWindows(cache, 200).hit('k', 1, 60_000, 1)).rejects.toThrow(/within 200 ms/);
    await cache.close();
  });
});
