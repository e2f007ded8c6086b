export { describeBatchRecordStoreContract } from './batch-record-store.contract';
export { aLink, describeLinkStoreContract } from './link-store.contract';
export { describeOutboxContract } from './outbox.contract';
export { describeRingStoreContract, describeShardMoveContract } from './resharding.contract';
