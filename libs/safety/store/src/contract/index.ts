export { describeSafetyStoreContract } from './safety-store.contract';
