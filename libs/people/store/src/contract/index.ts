export { describePeopleStoreContract, metaFixture, type PeopleFixture } from './people-store.contract';
export { describeSsoStoreContract } from './sso-store.contract';
