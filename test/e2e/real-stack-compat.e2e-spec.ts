import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { startApp } from '@shortlink/harness';
import { createTenant, useRealStackApps } from './support';
import { describeBitlyJourney } from './bitly-journey';
import { api } from './tenant-journey';
import { describeYourlsJourney, yourlsClient } from './yourls-journey';

/**
 * Compatibility APIs on the real stack: generation, redirect and analytics as processes
 * on MariaDB, Redis Cluster, Kafka and ClickHouse (a database of this run). The generation app reads
 * the click counts from ClickHouse itself (the olap-reader port).
 */
describe('real stack: compatibility APIs', () => {
  const stack = useRealStackApps('compat', { olap: 'clickhouse', shared: { SHORTLINK_PUBLIC_BASE_URL: 'http://e2e.shortlink.test' } });
  const endpoints = () => stack().endpoints;

  describeYourlsJourney(
    endpoints,
    () => createTenant(endpoints()),
    () => createTenant(endpoints(), 'free'),
  );
  describeBitlyJourney(endpoints, () => createTenant(endpoints()));

  it('a generation instance that cannot reach the click store (chdb in another process) answers 0 clicks with a note, not an error', async () => {
    const { apiKey } = await createTenant(endpoints());
    const dataDir = mkdtempSync(join(tmpdir(), 'shortlink-compat-lone-'));
    const lone = await startApp('generation', { ...stack().shared, OLAP_DRIVER: 'chdb', SHORTLINK_DATA_DIR: dataDir });
    try {
      const signature = (await api(lone.base, 'GET', '/api/v1/compat/yourls/signature', apiKey)).body.signature as string;
      const made = await yourlsClient(`${lone.base}/yourls-api.php`, { signature }, 'shorten', { url: 'https://example.com/yourls/lone' });
      const res = await fetch(`${lone.base}/yourls-api.php?${new URLSearchParams({ signature, action: 'url-stats', shorturl: made.keyword, format: 'json' })}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ link: { clicks: '0', keyword: made.keyword }, note: expect.stringMatching(/not available/) });
    } finally {
      await lone.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
