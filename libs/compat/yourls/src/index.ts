// YOURLS' API (/yourls-api.php) over our links, mounted by the generation app (docs/design.md, "Compatibility APIs").
export { YOURLS_PORTS, yourlsCompat, type YourlsOptions } from './yourls.module';
export { yourlsOpenApi } from './yourls.openapi';
export { YourlsSignatures } from './yourls-signatures';
