export * from './infrastructure';
export * from './secrets';
