import 'reflect-metadata';
import { ConfigError, loadConfig } from '@shortlink/config';
import { LINK_REPOSITORY, LinkRepository } from '@shortlink/links-domain';
import { BloomFilter, BloomMaintainer, CACHE_STORE, CacheStore, generationBytes } from '@shortlink/read-path';
import { withPorts } from '@shortlink/wiring';

/**
 * `npm run bloom:rebuild [-- --expected=N]`: rebuilds the Bloom filter of existing links from every
 * shard into one generation sized for 1.5 × the links expected (N, or estimated from the generations
 * in use; at least BLOOM_CAPACITY), then drops the old generations (docs/design.md, "Redirect read
 * path"). Safe while redirects are served: they keep checking the old generations until the new one
 * is complete and every instance knows it; a change of the layout under way elsewhere makes this one
 * report "busy" (exit code 3).
 */
async function main() {
  const config = loadConfig(process.env);
  const arg = process.argv.find((a) => a.startsWith('--expected='));
  const expected = arg ? Number(arg.slice('--expected='.length)) : undefined;
  if (expected !== undefined && !(Number.isInteger(expected) && expected >= 0)) throw new Error('--expected must be a whole number of links');
  await withPorts(config, [CACHE_STORE, LINK_REPOSITORY], async (get) => {
    const started = Date.now();
    const cache = get<CacheStore>(CACHE_STORE);
    const filter = new BloomFilter(cache, config.redirect.bloom);
    const report = await new BloomMaintainer(filter, cache, get<LinkRepository>(LINK_REPOSITORY)).rebuild(5000, expected);
    console.log(
      JSON.stringify({
        result: report.outcome,
        links: report.links,
        generations: (report.layout?.generations ?? []).map((g) => ({
          id: g.id,
          capacity: g.capacity,
          falsePositiveRate: g.falsePositiveRate,
          partitions: g.partitions,
          bitsPerPartition: g.bitsPerPartition,
          hashes: g.hashes,
          bytes: generationBytes(g),
        })),
        ms: Date.now() - started,
      }),
    );
    process.exitCode = report.outcome === 'built' ? 0 : 3;
  });
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
