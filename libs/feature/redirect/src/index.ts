export * from './redirect-feature.module';
export { RedirectHttpHandler } from './redirect-http.handler';
export { ClickRecorder } from './click-recorder';
