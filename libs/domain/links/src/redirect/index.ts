export * from './target-url';
export * from './link-rules';
