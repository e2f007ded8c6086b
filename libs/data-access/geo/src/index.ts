export * from './mmdb/mmdb-geo-lookup';
