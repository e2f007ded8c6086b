import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { App, startApp } from '@shortlink/harness';
import { requireEnv, startTargetTestServer, startWebRiskTestServer, TargetTestServer, WebRiskTestServer } from '@shortlink/testing';
import { describeSafetyConsole } from './safety-console';
import { describeSafetyJourney, INITIAL_FEEDS, safetyEnv, WEB_RISK_KEY, writeFeeds } from './safety-journey';
import { realStackEnv } from './support';

/**
 * Trust and safety on the real stack: one generation and two redirect instances on the MariaDB meta
 * database and shards and the Redis Cluster, and an analytics instance for the webhook deliverer
 * (`link.flagged`, `link.broken`), the events and clicks on Kafka topics of this run (the rollups in
 * chdb in the run's folder). Feed hits, operators' bans and broken health reach both
 * redirect instances over the link change channel within the bound of link edits. The dead-link
 * checks of a new link are made by the generation instance that made it (its first checks), so they
 * do not wait behind the shared meta database's backlog of other runs' targets. The visitor's report
 * and the operator's ban in Chromium, on both redirect instances.
 */
describe('real stack: trust and safety on two redirect instances', () => {
  const RUN = Date.now().toString(36);
  const apps: App[] = [];
  let feedDir: string;
  let targets: TargetTestServer;
  let webRisk: WebRiskTestServer;

  beforeAll(async () => {
    feedDir = mkdtempSync(join(tmpdir(), 'shortlink-real-safety-'));
    targets = await startTargetTestServer();
    webRisk = await startWebRiskTestServer(WEB_RISK_KEY);
    writeFeeds(feedDir, INITIAL_FEEDS);
    requireEnv('KAFKA_BROKERS');
    const run = `e2e-safety.${RUN}`;
    const env = realStackEnv({
      ...safetyEnv(feedDir, webRisk.endpoint),
      BUS_DRIVER: 'kafka',
      OLAP_DRIVER: 'chdb',
      SHORTLINK_DATA_DIR: feedDir,
      KAFKA_CLICK_TOPIC: `shortlink.clicks.${run}`,
      KAFKA_CONSUMER_GROUP: `${run}.analytics`,
      KAFKA_EVENTS_TOPIC: `shortlink.events.${run}`,
      KAFKA_WEBHOOK_CONSUMER_GROUP: `${run}.webhooks`,
    });
    // A redirect waits up to 30 s for the Bloom filter before it listens: on the shared, busy machine the default minute is short.
    const slow = { timeoutMs: 150_000 };
    apps.push(await startApp('generation', env, slow));
    apps.push(...(await Promise.all([startApp('redirect', env, slow), startApp('redirect', env, slow), startApp('analytics', env, slow)])));
  }, 400_000);

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.stop()));
    await targets?.close();
    await webRisk?.close();
    rmSync(feedDir, { recursive: true, force: true });
  });

  const safetyApps = () => ({ generation: apps[0].base, redirects: [apps[1].base, apps[2].base], feedDir, targets, webRisk });
  describeSafetyJourney(safetyApps, RUN);
  describeSafetyConsole(safetyApps, { screenshots: false });
});
