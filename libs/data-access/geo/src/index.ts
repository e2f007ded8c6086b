export { MmdbGeoLookup } from './mmdb/mmdb-geo-lookup';
