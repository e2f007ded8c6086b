import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { API_KEY, createLink, createTenant, redirectOf, restartEmbedded, startEmbedded } from './support';
import { BOOT_SCAN_STORE_SHARE, scanRightAfterStart } from './bloom-boot-journey';
import { describeBloomGrowthJourney } from './bloom-journey';

/** The Bloom filter's growth on the embedded profile (`npm start`: SQLite shards, in-process cache). */
describe('embedded profile: the Bloom filter grows with the links', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-e2e-bloom-'));
    ({ proc, endpoints } = await startEmbedded(dataDir, {
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      BLOOM_CAPACITY: '1000',
      BLOOM_LAYOUT_REFRESH_MS: '100',
      RATE_LIMIT_PER_IP_PER_MINUTE: '0',
      RATE_LIMIT_GLOBAL_PER_SECOND: '0',
    }));
  });

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describeBloomGrowthJourney(
    () => endpoints,
    async () => (await createTenant(endpoints)).apiKey,
    3000,
  );
});

/** `npm start` again on the same data: its in-process cache starts empty, and the filter is built before the redirect answers. */
describe('embedded profile: the Bloom filter is ready before the redirect is', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let env: Record<string, string>;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-e2e-bloom-boot-'));
    ({ proc, endpoints, env } = await startEmbedded(dataDir, {
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      RATE_LIMIT_PER_IP_PER_MINUTE: '0',
      RATE_LIMIT_GLOBAL_PER_SECOND: '0',
    }));
  });

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(`sends at most ${BOOT_SCAN_STORE_SHARE * 100} % of 3 000 unknown codes scanned right after a restart to the shards, and 404s none of the links`, async () => {
    const codes: string[] = [];
    for (let i = 0; i < 50; i++) {
      const created = await createLink(endpoints, { url: `https://example.com/boot-scan/${i}` });
      expect(created.status).toBe(201);
      codes.push(created.body.code as string);
    }
    proc = await restartEmbedded(proc, endpoints, env);
    const scan = await scanRightAfterStart(endpoints.redirect, endpoints.admin.redirect);
    process.stdout.write(`\nembedded boot scan: ${JSON.stringify({ probes: scan.statuses.length, reachedStore: scan.reachedStore, ms: scan.ms })}\n`);
    expect(scan.otherThan404).toEqual([]);
    expect(scan.reachedStore).toBeLessThanOrEqual(BOOT_SCAN_STORE_SHARE * scan.statuses.length);
    for (const code of codes) expect((await redirectOf(endpoints, code)).status).toBe(302);
  }, 180_000);
});
