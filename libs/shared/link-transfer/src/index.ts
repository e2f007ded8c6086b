/** Link import (CSV of ours, Bitly, Shlink, YOURLS; Kutt's JSON list) through the batch API, and export to CSV. */
export * from './formats';
export * from './csv-cells';
export * from './csv-import';
export * from './csv-export';
