import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { App, startApp } from '@shortlink/harness';
import { startTargetTestServer, TargetTestServer } from '@shortlink/testing';
import { describeSafetyJourney, INITIAL_FEEDS, safetyEnv, writeFeeds } from './safety-journey';
import { realStackEnv } from './support';

/**
 * Trust and safety on the real stack: one generation and two redirect instances on the MariaDB meta
 * database and shards and the Redis Cluster. Feed hits, operators' bans and broken health reach both
 * redirect instances over the link change channel within the bound of link edits. The dead-link
 * checks and the broken-link fallback need a fleet of their own (see below): embedded profile.
 */
describe('real stack: trust and safety on two redirect instances', () => {
  const RUN = Date.now().toString(36);
  const apps: App[] = [];
  let feedDir: string;
  let targets: TargetTestServer;

  beforeAll(async () => {
    feedDir = mkdtempSync(join(tmpdir(), 'shortlink-real-safety-'));
    targets = await startTargetTestServer();
    writeFeeds(feedDir, INITIAL_FEEDS);
    const env = realStackEnv(safetyEnv(feedDir));
    apps.push(await startApp('generation', env));
    apps.push(...(await Promise.all([startApp('redirect', env), startApp('redirect', env)])));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.stop()));
    await targets?.close();
    rmSync(feedDir, { recursive: true, force: true });
  });

  // The dead-link checks are the fleet's (one lease in the shared meta database, the oldest due target first): other runs' targets
  // come before this run's, so they are tested on the embedded profile and in the safety domain's specs.
  describeSafetyJourney(() => ({ generation: apps[0].base, redirects: [apps[1].base, apps[2].base], feedDir, targets }), RUN, { deadLinkChecks: false });
});
