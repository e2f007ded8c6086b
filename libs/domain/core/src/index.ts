export * from './domain-error';
export * from './clock';
export * from './lifecycle';
