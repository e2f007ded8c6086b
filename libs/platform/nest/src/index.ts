export * from './auth';
export * from './admin';
export * from './client-address';
export * from './http-server';
export * from './problem-details';
export * from './problem-details.filter';
export * from './metrics';
export * from './health';
export * from './app-factory';
export * from './front-door';
export * from './logging';
export * from './lifecycle';

export * from './contract';
export * from './openapi';
export * from './streamed-body';
export { jsonDepth, MAX_JSON_DEPTH } from './json-body';
