/**
 * What an L1 entry costs on the heap against what the L1 counts for REDIRECT_L1_MAX_BYTES (issue
 * 24, "Memory"). For a plain link and for one with rules and a social card: `--entries` links, as
 * the redirect gets them from Redis (JSON parsed), stored in an L1Cache; the heap growth after a
 * full GC per entry, the bytes the L1 counts per entry, and how many such entries the default
 * 64 MiB bound admits. In-process, no server. By hand:
 *
 *   node --expose-gc -r ./tools/register.js bench/l1-memory/run.ts [--entries 100000]
 */
import { mkdirSync, writeFileSync } from 'fs';
import { join } from 'path';
import { datedResultFile, loadAverages, machineFacts, markdownTable, REPO_ROOT } from '@shortlink/harness';
import { L1Cache } from '@shortlink/read-path';

const at = process.argv.indexOf('--entries');
const ENTRIES = at > 0 ? Number(process.argv[at + 1]) : 100_000;
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const heapUsed = () => (gc(), gc(), process.memoryUsage().heapUsed);

function linkJson(i: number, rich: boolean): string {
  const link: Record<string, unknown> = {
    id: `0193a5b2-7c1d-7e3f-8a9b-${String(i).padStart(12, '0')}`,
    tenantId: 'tenant-acme',
    targetUrl: `https://www.example.com/products/item-${i}?ref=newsletter&campaign=winter`,
    redirectType: 302,
    expiresAt: null,
    status: 'active',
    version: 1,
    createdAt: 1764950000000 + i,
  };
  if (rich)
    Object.assign(link, {
      title: `Winter sale item ${i}`,
      rules: {
        maxClicks: 1000,
        geoTargets: { DE: `https://de.example.com/${i}`, FR: `https://fr.example.com/${i}` },
        deviceTargets: { ios: `https://apps.apple.com/app/id${i}` },
        variants: [
          { url: `https://a.example.com/${i}`, weight: 50 },
          { url: `https://b.example.com/${i}`, weight: 50 },
        ],
        utm: { source: 'newsletter', medium: 'email', campaign: 'winter' },
      },
      social: { title: `Item ${i}`, description: 'A fine item for the winter, at a fine price.', image: `https://img.example.com/${i}.png` },
    });
  return JSON.stringify(link);
}

function measure(rich: boolean): (string | number)[] {
  const l1 = new L1Cache({ maxEntries: ENTRIES * 2, maxBytes: 2 ** 40, ttlMs: 3_600_000, negativeTtlMs: 5000 });
  const before = heapUsed();
  for (let i = 0; i < ENTRIES; i++) l1.setPositive(`short:link:sho.rt:${(1e9 + i * 7919).toString(36).slice(-7)}`, JSON.parse(linkJson(i, rich)), false);
  const heapPerEntry = (heapUsed() - before) / ENTRIES;
  const countedPerEntry = l1.size.bytes / ENTRIES;
  const admitted = Math.floor(DEFAULT_MAX_BYTES / countedPerEntry);
  return [
    rich ? 'rules, variants, UTM and a social card' : 'plain (target only)',
    Math.round(heapPerEntry),
    Math.round(countedPerEntry),
    (countedPerEntry / heapPerEntry).toFixed(2),
    admitted,
    ((admitted * heapPerEntry) / 2 ** 20).toFixed(0),
  ];
}

const start = new Date();
const startLoad = loadAverages();
const table = markdownTable(
  [
    ['link', 'l'],
    ['heap bytes per entry (measured)', 'r'],
    ['bytes counted per entry', 'r'],
    ['counted / measured', 'r'],
    ['entries the default 64 MiB admits', 'r'],
    ['their heap, MiB', 'r'],
  ],
  [measure(false), measure(true)],
);
const report = [
  `# L1 entry cost, ${start.toISOString().slice(0, 10)}`,
  '',
  `Produced by \`node --expose-gc -r ./tools/register.js bench/l1-memory/run.ts --entries ${ENTRIES}\`.`,
  '',
  '## Machine',
  '',
  ...machineFacts({ start, startLoad: `${startLoad}; at end: ${loadAverages()}` }),
  '',
  '## Results',
  '',
  table,
  '',
].join('\n');
console.log(table);
const dir = join(REPO_ROOT, 'bench/results');
mkdirSync(dir, { recursive: true });
const file = datedResultFile(dir, 'l1-memory', start);
writeFileSync(file, report);
console.log(`written ${file}`);
