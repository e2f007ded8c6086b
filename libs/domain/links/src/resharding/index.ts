export * from './ring-spec';
export * from './routing-state';
export * from './ports';
export * from './flows';
export * from './ring-watcher';
export * from './resharder';
