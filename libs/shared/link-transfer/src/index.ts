/** Link import (CSV of ours, Bitly, Shlink, YOURLS; Kutt's JSON list) through the batch API, and export to CSV. */
export { guardCell } from './csv-cells';
export { exportLinks } from './csv-export';
export { importLinks } from './csv-import';
export { type Format, FORMATS } from './formats';
