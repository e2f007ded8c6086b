import type { components } from './generation-api';

/** Every named schema of the generation API's document. */
export type Schemas = components['schemas'];
export type Link = Schemas['Link'];
export type LinkPage = Schemas['LinkPage'];
export type LinkCreation = Schemas['LinkCreation'];
export type LinkEdit = Schemas['LinkEdit'];
export type ApiKey = Schemas['ApiKey'];
export type KeyCreation = Schemas['KeyCreation'];
/** A created key: its record and the secret, shown this once. */
export type IssuedKey = Schemas['IssuedKey'];
