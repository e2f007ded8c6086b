export * from './port-spec';
export * from './catalog';
export * from './ports-module';
export * from './run-app';
export * from './secrets';
