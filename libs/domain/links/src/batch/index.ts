export * from './ports';
export * from './batch-creator';
export * from './bulk-links';
