export * from './redirect-feature.module';
export { RedirectHttpHandler } from './redirect-http.handler';
