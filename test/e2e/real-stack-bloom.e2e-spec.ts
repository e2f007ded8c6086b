import { App, startApp } from '@shortlink/harness';
import { API_KEY, useRealStackApps } from './support';
import { BOOT_SCAN_STORE_SHARE, scanRightAfterStart } from './bloom-boot-journey';

/** A redirect started on the real stack reads the Bloom filter's layout (Redis Cluster) before it answers. */
describe('real stack: the Bloom filter is ready before the redirect is', () => {
  // A domain of its own: the default one would be localhost:<port> of each redirect.
  const shared = {
    SHORTLINK_DEFAULT_DOMAIN: `boot-${Date.now().toString(36)}.shortlink.test`,
    RATE_LIMIT_PER_IP_PER_MINUTE: '0',
    RATE_LIMIT_GLOBAL_PER_SECOND: '0',
  };
  const apps = useRealStackApps('bloom-boot', { olap: 'chdb', shared });
  let redirect: App | undefined;

  afterAll(async () => {
    await redirect?.stop();
  });

  it(`sends at most ${BOOT_SCAN_STORE_SHARE * 100} % of 3 000 unknown codes scanned right after a start to the shards, and 404s none of the links`, async () => {
    const { endpoints, shared: settings } = apps();
    const run = Date.now().toString(36);
    const codes: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${endpoints.generation}/api/v1/links`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
        body: JSON.stringify({ url: `https://example.com/boot-scan/${run}/${i}` }),
      });
      expect(res.status).toBe(201);
      codes.push(((await res.json()) as { code: string }).code);
    }
    // One more redirect instance, started now: the scan meets it right after it answered /health.
    redirect = await startApp('redirect', settings);
    const scan = await scanRightAfterStart(redirect.base, redirect.admin);
    process.stdout.write(`\nreal-stack boot scan: ${JSON.stringify({ probes: scan.statuses.length, reachedStore: scan.reachedStore, ms: scan.ms })}\n`);
    expect(scan.otherThan404).toEqual([]);
    expect(scan.reachedStore).toBeLessThanOrEqual(BOOT_SCAN_STORE_SHARE * scan.statuses.length);
    for (const code of codes) expect((await fetch(`${redirect.base}/${code}`, { redirect: 'manual' })).status).toBe(302);
  }, 180_000);
});
