import { Cluster } from 'ioredis';
import { CacheKeys } from '@shortlink/read-path';
import { redisClusterNodes as nodes } from '@shortlink/testing';
import { describeVisitorWindowsContract } from '../contract/visitor-windows.contract';
import { RedisClusterStore } from './redis-cluster-store';
import { RedisVisitorWindows } from './redis-visitor-windows';
import { VISITOR_WINDOW_MS } from '@shortlink/redirect-rules';

describeVisitorWindowsContract('redis cluster', async (clock) => {
  const cache = new RedisClusterStore({ nodes: nodes() });
  await cache.ping();
  return { store: new RedisVisitorWindows(cache, () => clock.now()), close: () => cache.close() };
});

describe('RedisVisitorWindows', () => {
  it('keeps a window’s counter until its window is over and a few seconds more, then lets it expire', async () => {
    const cache = new RedisClusterStore({ nodes: nodes() });
    const reader = new Cluster(nodes(), { redisOptions: { connectTimeout: 2000 } });
    try {
      const now = Date.now();
      const window = Math.floor(now / VISITOR_WINDOW_MS);
      const linkId = `ttl-${now}`;
      expect(await new RedisVisitorWindows(cache, () => now).add([{ linkId, address: '203.0.113.1', window, delta: 2 }], VISITOR_WINDOW_MS)).toEqual([2]);
      const ttl = await reader.pttl(CacheKeys.visitorWindow(linkId, '203.0.113.1', window));
      const untilWindowEnds = (window + 1) * VISITOR_WINDOW_MS - now;
      expect(ttl).toBeGreaterThan(untilWindowEnds);
      expect(ttl).toBeLessThanOrEqual(untilWindowEnds + 5000);
    } finally {
      reader.disconnect();
      await cache.close();
    }
  });
});
