// The batch records' in-memory double, for specs only: the stores' contract suites run on it too.
export { InMemoryBatchRecords } from './in-memory-batch-records';
