import 'reflect-metadata';
import { ConfigError, loadConfig } from '@shortlink/config';
import { Infrastructure } from '@shortlink/infrastructure';

/**
 * `npm run bloom:rebuild`: rebuilds the Bloom filter of existing links from every shard. Safe to
 * run while redirects are served: until it marks the filter built, lookups treat it as "unknown"
 * and go to the shard; a concurrent rebuild elsewhere makes this one report "busy".
 */
async function main() {
  const config = loadConfig(process.env);
  const infra = new Infrastructure(config);
  try {
    const started = Date.now();
    const bloom = await infra.bloomMaintainer();
    const result = await bloom.rebuild();
    const f = bloom.filter;
    console.log(JSON.stringify({ result, partitions: f.options.partitions, bitsPerPartition: f.bitsPerPartition, hashes: f.hashes, capacity: f.options.capacity, ms: Date.now() - started }));
    process.exitCode = result === 'built' ? 0 : 3;
  } finally {
    await infra.close();
  }
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
