import 'reflect-metadata';
import { ConfigError, loadConfig } from '@shortlink/config';
import { LINK_REPOSITORY, LinkRepository } from '@shortlink/links-domain';
import { BloomFilter, BloomMaintainer, CACHE_STORE, CacheStore } from '@shortlink/read-path';
import { withPorts } from '@shortlink/wiring';

/**
 * `npm run bloom:rebuild`: rebuilds the Bloom filter of existing links from every shard. Safe to
 * run while redirects are served: until it marks the filter built, lookups treat it as "unknown"
 * and go to the shard; a concurrent rebuild elsewhere makes this one report "busy".
 */
async function main() {
  const config = loadConfig(process.env);
  await withPorts(config, [CACHE_STORE, LINK_REPOSITORY], async (get) => {
    const started = Date.now();
    const cache = get<CacheStore>(CACHE_STORE);
    const filter = new BloomFilter(cache, config.redirect.bloom);
    const result = await new BloomMaintainer(filter, cache, get<LinkRepository>(LINK_REPOSITORY)).rebuild();
    console.log(
      JSON.stringify({
        result,
        partitions: filter.options.partitions,
        bitsPerPartition: filter.bitsPerPartition,
        hashes: filter.hashes,
        capacity: filter.options.capacity,
        ms: Date.now() - started,
      }),
    );
    process.exitCode = result === 'built' ? 0 : 3;
  });
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
