export { SHLINK_COMPAT, SHLINK_PORTS } from './shlink.module';
export { buildShlinkDocument } from './shlink-openapi';
