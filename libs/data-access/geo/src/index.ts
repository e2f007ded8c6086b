export { bundledGeoDatabase, MmdbGeoLookup } from './mmdb/mmdb-geo-lookup';
