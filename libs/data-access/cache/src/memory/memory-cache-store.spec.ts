import { describeCacheStoreAtomicsContract, describeCacheStoreContract } from '../contract/cache-store.contract';
import { MemoryCacheStore } from './memory-cache-store';

describeCacheStoreContract('memory', async () => new MemoryCacheStore(10_000));

describe('MemoryCacheStore', () => {
  it('evicts the least recently used entry when full', async () => {
    const store = new MemoryCacheStore(100);
    for (let i = 0; i < 100; i++) await store.set(`k${i}`, 'v');
    await store.get('k0');
    await store.set('k100', 'v');
    expect(await store.get('k0')).toBe('v');
    expect(await store.get('k1')).toBeNull();
  });
});

describeCacheStoreAtomicsContract('memory', async () => new MemoryCacheStore(10_000));
