import { redisClusterNodes as nodes } from '@shortlink/testing';
import { describeClickLeasesContract } from '../contract/click-leases.contract';
import { RedisClickLeases } from './redis-click-leases';
import { RedisClusterStore } from './redis-cluster-store';

// Leases end on Redis' own clock: the contract lets real time pass.
describeClickLeasesContract('redis cluster', async () => {
  const cache = new RedisClusterStore({ nodes: nodes() });
  await cache.ping();
  return {
    store: new RedisClickLeases(cache),
    advance: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    close: () => cache.close(),
  };
});
