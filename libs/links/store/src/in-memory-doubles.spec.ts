import { IdBlock } from '@shortlink/links-domain';
import { InMemoryLinkShard } from '@shortlink/links-domain/testing';
import { InMemoryBatchRecords } from '@shortlink/link-batch/testing';
import { InMemoryMovableShard, InMemoryRingStore } from '@shortlink/sharding-domain/testing';
import { describeBatchRecordStoreContract } from './contract/batch-record-store.contract';
import { describeLinkStoreContract } from './contract/link-store.contract';
import { describeOutboxContract } from './contract/outbox.contract';
import { describeRingStoreContract, describeShardMoveContract } from './contract/resharding.contract';

/**
 * The domain's specs (the resharder, the batch creator, the link and tenant services) run on these doubles, since a domain lib
 * may not depend on the adapters: the doubles keep the adapters' rules only if they pass the same contract suites.
 */

/** The id counter the domain's specs hand out blocks with. */
const counter = () => {
  let next = 1n;
  return { allocateBlock: async (_: string, size: number): Promise<IdBlock> => ({ start: next, end: (next += BigInt(size)) }), close: async () => undefined };
};

describeLinkStoreContract('in-memory double', async () => ({ shard: new InMemoryLinkShard('s0'), meta: counter(), close: async () => undefined }));
describeLinkStoreContract('in-memory movable double', async () => ({ shard: new InMemoryMovableShard('s0'), meta: counter(), close: async () => undefined }));
describeOutboxContract('in-memory double', async () => ({ open: async (stamp) => new InMemoryMovableShard('s0', { stamp }), close: async () => undefined }));
describeShardMoveContract('in-memory double', async () => ({
  a: new InMemoryMovableShard('a'),
  b: new InMemoryMovableShard('b'),
  close: async () => undefined,
}));
describeRingStoreContract('in-memory double', async () => ({ ring: new InMemoryRingStore(), close: async () => undefined }));
describeBatchRecordStoreContract('in-memory double', async () => ({ batches: new InMemoryBatchRecords(), close: async () => undefined }));
