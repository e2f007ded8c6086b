// Batch creation and bulk changes of links (docs/design.md, "Batch creation").
export { BatchCreator } from './batch-creator';
export { BulkLinks, type BulkOutcome, type BulkSelection } from './bulk-links';
export type { BatchOutcome, BatchRow } from './chunk';
export { BATCH_RECORD_STORE, type BatchChunkRecord, type BatchClaim, type BatchClaimOutcome, type BatchKey, type BatchRecordStore } from './ports';
