import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { startTargetTestServer, startWebRiskTestServer, TargetTestServer, WebRiskTestServer } from '@shortlink/testing';
import { describeSafetyConsole } from './safety-console';
import { describeSafetyJourney, INITIAL_FEEDS, safetyEnv, WEB_RISK_KEY, writeFeeds } from './safety-journey';
import { API_KEY, startEmbedded } from './support';

/**
 * Trust and safety over HTTP on the embedded profile (docs/design.md, "Trust and safety"), and the
 * visitor's report and the operator's ban in headless Chromium; this profile keeps the screenshots.
 */
describe('embedded profile: trust and safety', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;
  let targets: TargetTestServer;
  let webRisk: WebRiskTestServer;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-safety-'));
    targets = await startTargetTestServer();
    webRisk = await startWebRiskTestServer(WEB_RISK_KEY);
    writeFeeds(dataDir, INITIAL_FEEDS);
    ({ proc, endpoints } = await startEmbedded(dataDir, { SHORTLINK_BOOTSTRAP_API_KEY: API_KEY, ...safetyEnv(dataDir, webRisk.endpoint) }));
  }, 120_000);

  afterAll(async () => {
    await proc?.stop();
    await targets?.close();
    await webRisk?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const apps = () => ({ generation: endpoints.generation, redirects: [endpoints.redirect], feedDir: dataDir, targets, webRisk });
  describeSafetyJourney(apps, Date.now().toString(36));
  describeSafetyConsole(apps, { screenshots: true });
});
