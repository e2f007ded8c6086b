export * from './redirect.module';
export * from './redirect-http.handler';
