export * from './geo';
export * from './user-agent';
export * from './visitor-id';
