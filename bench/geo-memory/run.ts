/**
 * The redirect's memory with each geo database: GEO_DATABASE=country (DB-IP country,
 * one ~8 MB file) against GEO_DATABASE=city (DB-IP city, an IPv4 and an IPv6 file, ~135 MB), both
 * read into memory. For each: a generation and a redirect process on the real stack (MariaDB,
 * Redis Cluster, Kafka on a topic of its own), the redirect's RSS once serving, then its peak RSS
 * while it answers `--clicks` redirects from as many distinct public addresses as `--addresses`
 * (each click enriched with its place in the flusher), then its RSS after. By hand:
 *
 *   set -a; . deploy/local/.run/stack.env; set +a
 *   node -r ./tools/register.js bench/geo-memory/run.ts [--clicks 20000] [--addresses 5000]
 */
import { readFileSync } from 'fs';
import { App, markdownTable, serverSecrets, sleep, startApp, withoutAppSettings } from '@shortlink/harness';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const CLICKS = arg('clicks', 20_000);
const ADDRESSES = arg('addresses', 5000);
const KEY = 'sl_bench_geo_memory_0123456789ab';
const mib = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/** A public-looking IPv4 address per index (first octets 1-223, skipping 10, 127, 172 and 192). */
function address(i: number): string {
  const firsts = Array.from({ length: 223 }, (_, k) => k + 1).filter((o) => ![10, 127, 172, 192].includes(o));
  return `${firsts[i % firsts.length]}.${(i * 7) % 256}.${(i * 13) % 256}.${((i * 31) % 254) + 1}`;
}

async function measure(database: 'country' | 'city'): Promise<[string, string, string, string]> {
  const run = `${database}-${Date.now().toString(36)}`;
  const env = {
    ...(withoutAppSettings() as Record<string, string>),
    ...serverSecrets(),
    DB_DRIVER: 'mysql',
    CACHE_DRIVER: 'redis',
    BUS_DRIVER: 'kafka',
    OLAP_DRIVER: 'chdb',
    MYSQL_SHARDS: process.env.MYSQL_SHARDS!,
    MYSQL_META_URL: process.env.MYSQL_META_URL!,
    REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES!,
    KAFKA_BROKERS: process.env.KAFKA_BROKERS!,
    KAFKA_CLICK_TOPIC: `shortlink.clicks.bench.geo.${run}`,
    SHORTLINK_BOOTSTRAP_API_KEY: KEY,
    SHORTLINK_DEFAULT_DOMAIN: `geo-${run}.shortlink.test`,
    SHORTLINK_PUBLIC_BASE_URL: `http://geo-${run}.shortlink.test`,
    TRUSTED_PROXIES: '127.0.0.1/32',
    RATE_LIMIT_PER_IP_PER_MINUTE: '0',
    RATE_LIMIT_GLOBAL_PER_SECOND: '0',
    LOG_LEVEL: 'warn',
    GEO_DATABASE: database,
  };
  const apps: App[] = [];
  try {
    apps.push(await startApp('generation', env));
    const redirect = await startApp('redirect', env, { timeoutMs: 120_000 });
    apps.push(redirect);
    const created = await fetch(`${apps[0].base}/api/v1/links`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ url: 'https://example.com/geo-memory' }),
    });
    const { code } = (await created.json()) as { code: string };
    await sleep(2000);
    const pid = redirect.proc.pid!;
    const idle = mib(pid);
    let peak = idle;
    const sampler = setInterval(() => (peak = Math.max(peak, mib(pid))), 50);
    let next = 0;
    const worker = async () => {
      while (next < CLICKS) {
        const i = next++;
        const res = await fetch(`${redirect.base}/${code}`, {
          redirect: 'manual',
          headers: { 'x-forwarded-for': address(i % ADDRESSES), 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0 Safari/537.36' },
        });
        if (res.status !== 302) throw new Error(`redirect answered ${res.status}`);
        await res.arrayBuffer();
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    await sleep(2000);
    clearInterval(sampler);
    const after = mib(pid);
    return [database, idle.toFixed(0), peak.toFixed(0), after.toFixed(0)];
  } finally {
    await Promise.all(apps.map((a) => a.stop()));
  }
}

async function main(): Promise<void> {
  const rows = [];
  for (const database of ['country', 'city'] as const) rows.push(await measure(database));
  console.log(`Redirect RSS (MiB), ${CLICKS} redirects from ${ADDRESSES} addresses, node ${process.version}:\n`);
  console.log(
    markdownTable(
      [
        ['GEO_DATABASE', 'l'],
        ['serving', 'r'],
        ['peak under load', 'r'],
        ['after', 'r'],
      ],
      rows,
    ),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
