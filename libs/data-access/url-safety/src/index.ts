export * from './dns-host-resolver';
export * from './file-domain-block-list';
