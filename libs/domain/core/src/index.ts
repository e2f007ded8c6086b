export * from './domain-error';
export * from './clock';
export * from './lifecycle';
export * from './keyed-window-limiter';
export * from './instant';
export * from './host';
