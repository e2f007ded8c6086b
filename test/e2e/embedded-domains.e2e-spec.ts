import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { DnsResponder } from '@shortlink/testing';
import { describeDomainsConsole } from './domains-console';
import { describeDomainsJourney, domainsEnv, PortForward } from './domains-journey';
import { API_KEY, startEmbedded } from './support';

/** A tenant's own domains on the embedded profile (`npm start`): their proof, re-checks and loss, then the console's walk through it. */
describe('embedded profile: custom domains', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;
  let dns: DnsResponder;
  let front: PortForward;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-e2e-domains-'));
    dns = await DnsResponder.start();
    front = await PortForward.start();
    ({ proc, endpoints } = await startEmbedded(dataDir, { SHORTLINK_BOOTSTRAP_API_KEY: API_KEY, ...domainsEnv(dns, front) }));
    front.to(endpoints.redirect);
  }, 120_000);

  afterAll(async () => {
    await proc?.stop();
    await front?.stop();
    await dns?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const apps = () => ({ generation: endpoints.generation, redirect: endpoints.redirect, redirectAdmin: endpoints.admin.redirect, dns });
  describeDomainsJourney(apps);
  describeDomainsConsole(apps);
});
