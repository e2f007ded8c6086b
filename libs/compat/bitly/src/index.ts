// Bitly's v4 API (a subset) over our links, mounted by the generation app (docs/design.md, "Compatibility APIs").
export { BITLY_PORTS, bitlyCompat, type BitlyOptions } from './bitly.module';
export { bitlyOpenApi } from './bitly.openapi';
