import { describeClickLeasesContract } from '../contract/click-leases.contract';
import { MemoryClickLeases } from './memory-click-leases';

describeClickLeasesContract('memory', async () => {
  let now = 1_800_000_000_000;
  return {
    store: new MemoryClickLeases({ now: () => now }),
    advance: async (ms) => void (now += ms),
    close: async () => undefined,
  };
});
