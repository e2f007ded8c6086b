import { requireEnv } from '@shortlink/testing';
import { describeCacheStoreAtomicsContract, describeCacheStoreContract } from '../contract/cache-store.contract';
import { RedisClusterStore } from './redis-cluster-store';

describeCacheStoreContract('redis cluster', async () => {
  const nodes = requireEnv('REDIS_CLUSTER_NODES').split(',').map((n) => ({ host: n.split(':')[0], port: Number(n.split(':')[1]) }));
  const store = new RedisClusterStore({ nodes });
  await store.ping();
  return store;
});

describeCacheStoreAtomicsContract('redis cluster', async () => {
  const nodes = requireEnv('REDIS_CLUSTER_NODES').split(',').map((n) => ({ host: n.split(':')[0], port: Number(n.split(':')[1]) }));
  return new RedisClusterStore({ nodes });
});
