import { requireEnv } from '@shortlink/testing';
import { App, startApp } from '@shortlink/harness';
import { API_KEY, SERVER_SECRETS } from './support';
import { BOOT_SCAN_STORE_SHARE, scanRightAfterStart } from './bloom-boot-journey';

/** A redirect started on the real stack reads the Bloom filter's layout (Redis Cluster) before it answers. */
describe('real stack: the Bloom filter is ready before the redirect is', () => {
  const RUN = Date.now().toString(36);
  const DOMAIN = `boot-${RUN}.shortlink.test`;
  let env: Record<string, string>;
  let generation: App;
  let redirect: App | undefined;

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES']) requireEnv(name);
    env = {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      BUS_DRIVER: 'memory',
      OLAP_DRIVER: 'chdb',
      LOG_LEVEL: 'warn',
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      ...SERVER_SECRETS,
      SHORTLINK_DEFAULT_DOMAIN: DOMAIN,
      SHORTLINK_PUBLIC_BASE_URL: `http://${DOMAIN}`,
      RATE_LIMIT_PER_IP_PER_MINUTE: '0',
      RATE_LIMIT_GLOBAL_PER_SECOND: '0',
    };
    generation = await startApp('generation', env);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([generation, redirect].map((app) => app?.stop()));
  });

  it(`sends at most ${BOOT_SCAN_STORE_SHARE * 100} % of 3 000 unknown codes scanned right after a start to the shards, and 404s none of the links`, async () => {
    const codes: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${generation.base}/api/v1/links`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
        body: JSON.stringify({ url: `https://example.com/boot-scan/${RUN}/${i}` }),
      });
      expect(res.status).toBe(201);
      codes.push(((await res.json()) as { code: string }).code);
    }
    redirect = await startApp('redirect', env);
    const scan = await scanRightAfterStart(redirect.base, redirect.admin);
    process.stdout.write(`\nreal-stack boot scan: ${JSON.stringify({ probes: scan.statuses.length, reachedStore: scan.reachedStore, ms: scan.ms })}\n`);
    expect(scan.statuses.filter((s) => s !== 404)).toEqual([]);
    expect(scan.reachedStore).toBeLessThanOrEqual(BOOT_SCAN_STORE_SHARE * scan.statuses.length);
    // The Host (127.0.0.1) names no domain: the default one, this run's, is read.
    for (const code of codes) expect((await fetch(`${redirect!.base}/${code}`, { redirect: 'manual' })).status).toBe(302);
  }, 180_000);
});
