export * from './generation.module';
export * from './links.controller';
