export { SHLINK_PORTS, shlinkCompat, type ShlinkOptions } from './shlink.module';
export { buildShlinkDocument } from './shlink-openapi';
