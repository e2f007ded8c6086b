export { describeConversionStoreContract } from './conversion-store.contract';
