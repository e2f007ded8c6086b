import { redisClusterNodes as nodes } from '@shortlink/testing';
import { describeVisitorWindowsContract } from '../contract/visitor-windows.contract';
import { RedisClusterStore } from './redis-cluster-store';
import { RedisVisitorWindows } from './redis-visitor-windows';

describeVisitorWindowsContract('redis cluster', async () => {
  const cache = new RedisClusterStore({ nodes: nodes() });
  await cache.ping();
  return { store: new RedisVisitorWindows(cache), close: () => cache.close() };
});

describe('RedisVisitorWindows', () => {
  it('fails within its deadline when the cluster does not answer (the instance then counts alone)', async () => {
    const cache = new RedisClusterStore({ nodes: [{ host: '127.0.0.1', port: 1 }], commandTimeoutMs: 5000 });
    await expect(new RedisVisitorWindows(cache, 200).hit('l', '203.0.113.1', 1, 60_000, true)).rejects.toThrow(/within 200 ms/);
    await cache.close();
  });
});
