export * from './port-spec';
export * from './catalog';
export * from './ports-module';
export * from './run-app';
export * from './secrets';
export { openLinkShards, ringStoreFor, ShardCatalog } from './ports/links.port';
export type { LinkShards } from './ports/links.port';
