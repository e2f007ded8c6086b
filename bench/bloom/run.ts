/**
 * Bloom filter sizing bench, on demand: the filter alone (no app, no database), its
 * false-positive rate measured on a scan of unknown codes at each size, (1) as it grows by
 * generations from its first capacity while links are added, as the redirect's growth check does,
 * and (2) after a rebuild compacted it into one generation sized from the count (`bloom:rebuild`).
 *
 *   node -r ./tools/register.js bench/bloom/run.ts [--store=memory|redis] [--sizes=100000,1000000,10000000]
 *     [--first=1000000] [--probes=200000] [--partitions=16] [--growth=2]
 *
 * `memory`: the embedded store in this process. `redis`: the Redis Cluster of REDIS_CLUSTER_NODES
 * (`set -a; . deploy/local/.run/stack.env; set +a`), under a layout of its own; its bitmaps are
 * deleted at the end. Writes bench/results/bloom-<store>-<date>.md.
 */
import { randomUUID } from 'crypto';
import { mkdirSync, writeFileSync } from 'fs';
import { join } from 'path';
import { MemoryCacheStore, RedisClusterStore } from '@shortlink/cache';
import { datedResultFile, loadAverages, machineFacts, markdownTable, REPO_ROOT } from '@shortlink/harness';
import { LinkRepository, ShortUrlIdentifier } from '@shortlink/links-domain';
import { bloomSize, BloomFilter, BloomMaintainer, CacheStore } from '@shortlink/read-path';
import { redisClusterNodes } from '@shortlink/testing';

const option = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const STORE = option('store', 'memory') as 'memory' | 'redis';
const SIZES = option('sizes', STORE === 'memory' ? '100000,1000000,10000000' : '100000,1000000')
  .split(',')
  .map(Number);
const FIRST = Number(option('first', '1000000'));
const PROBES = Number(option('probes', '200000'));
const PARTITIONS = Number(option('partitions', '16'));
const GROWTH = Number(option('growth', '2'));
const TARGET = 0.01;
const DOMAIN = 'bench.shortlink.test';
const CHUNK = STORE === 'memory' ? 50_000 : 5_000;

const code = (prefix: string, i: number) => `${DOMAIN}/${prefix}${i.toString(36)}`;

interface Row {
  links: number;
  layout: 'grown' | 'compacted';
  generations: string;
  capacity: number;
  mib: number;
  rate: number;
  fixedRate: number;
  addSeconds: number;
}

async function main() {
  const start = new Date();
  const startLoad = loadAverages();
  const store: CacheStore = STORE === 'memory' ? new MemoryCacheStore(1000) : new RedisClusterStore({ nodes: redisClusterNodes() });
  await store.ping();
  let count = 0;
  const links = {
    async *identifierPages(size: number): AsyncGenerator<ShortUrlIdentifier[]> {
      for (let i = 0; i < count; i += size) {
        yield Array.from({ length: Math.min(size, count - i) }, (_, j) => ({ domain: DOMAIN, code: code('in', i + j).slice(DOMAIN.length + 1) }));
      }
    },
  } as unknown as LinkRepository;
  const filter = new BloomFilter(store, {
    capacity: FIRST,
    falsePositiveRate: TARGET,
    partitions: PARTITIONS,
    growth: GROWTH,
    refreshMs: 1000,
    keySpace: STORE === 'redis' ? `bench-${randomUUID()}:` : undefined,
  });
  const maintainer = new BloomMaintainer(filter, store, links);
  await filter.follow();
  const everyKey = new Set<string>();
  const remember = () => filter.view()?.generations.forEach((g) => filter.partitionKeys(g).forEach((k) => everyKey.add(k)));
  const rows: Row[] = [];
  // What one generation fixed at the first capacity would give (the single-generation filter the platform had before generations), from the formula.
  const fixed = bloomSize(FIRST, TARGET);
  const fixedRate = (n: number) => (1 - Math.exp((-fixed.hashes * n) / fixed.bits)) ** fixed.hashes;

  const measure = async (layout: Row['layout'], addSeconds: number) => {
    let passed = 0;
    for (let i = 0; i < PROBES; i += 1000) {
      // Timers (the layout's refresh) run between batches, as they would between real I/O.
      await new Promise((r) => setImmediate(r));
      const answers = await Promise.all(Array.from({ length: Math.min(1000, PROBES - i) }, (_, j) => filter.check(code('out', i + j))));
      for (const a of answers) {
        if (a === 'unknown') throw new Error('the filter answered unknown during the measurement');
        if (a === 'maybe') passed++;
      }
    }
    const gens = filter.view()!.generations;
    const described = filter.describe();
    const row: Row = {
      links: count,
      layout,
      generations: gens.map((g) => `${(g.capacity / 1e6).toFixed(2)}M@${(100 * g.falsePositiveRate).toFixed(3)}%`).join(' + '),
      capacity: described.capacity,
      mib: described.bytes / 2 ** 20,
      rate: passed / PROBES,
      fixedRate: fixedRate(count),
      addSeconds,
    };
    rows.push(row);
    console.log(JSON.stringify(row));
  };

  try {
    await maintainer.rebuild();
    remember();
    for (const size of SIZES) {
      const t0 = Date.now();
      while (count < size) {
        const n = Math.min(CHUNK, size - count);
        await filter.addMany(Array.from({ length: n }, (_, j) => code('in', count + j)));
        count += n;
        await new Promise((r) => setImmediate(r));
        await maintainer.growIfFull();
        remember();
      }
      await measure('grown', (Date.now() - t0) / 1000);
      const t1 = Date.now();
      await maintainer.rebuild(CHUNK);
      remember();
      await measure('compacted', (Date.now() - t1) / 1000);
    }
  } finally {
    await maintainer.close();
    if (STORE === 'redis') await store.del([...everyKey, filter.layoutKey, filter.lockKey]).catch(() => undefined);
    await store.close();
  }

  const table = markdownTable(
    [
      ['links', 'r'],
      ['layout', 'l'],
      ['generations (capacity @ rate)', 'l'],
      ['capacity', 'r'],
      ['MiB', 'r'],
      [`false positives of ${PROBES} unknown codes`, 'r'],
      [`one generation of ${FIRST / 1e6}M (formula)`, 'r'],
      ['add / rebuild s', 'r'],
    ],
    rows.map((r) => [
      r.links.toLocaleString('en'),
      r.layout,
      r.generations,
      r.capacity.toLocaleString('en'),
      r.mib.toFixed(1),
      `${(100 * r.rate).toFixed(3)} %`,
      `${(100 * r.fixedRate).toFixed(2)} %`,
      r.addSeconds.toFixed(1),
    ]),
  );
  const dir = join(REPO_ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = datedResultFile(dir, `bloom-${STORE}`, start);
  const text = [
    `# Bloom filter sizing, ${STORE} store`,
    '',
    `Target ${100 * TARGET} % for the whole filter; first generation ${FIRST.toLocaleString('en')} links, ${PARTITIONS} partitions, growth ×${GROWTH}.`,
    '',
    ...machineFacts({ start, startLoad }),
    `- load at the end: ${loadAverages()}`,
    '',
    table,
    '',
  ].join('\n');
  writeFileSync(file, text);
  console.log(`\n${table}\n\nwritten to ${file}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
