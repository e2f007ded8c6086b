export * from './ports';
export * from './batch-creator';
export * from './batch-run';
export type { BatchOutcome, BatchRow } from './chunk';
export * from './bulk-links';
