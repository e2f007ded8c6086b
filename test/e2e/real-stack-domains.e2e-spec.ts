import { App, startApp } from '@shortlink/harness';
import { DnsResponder } from '@shortlink/testing';
import { describeDomainsJourney, domainsEnv, PortForward } from './domains-journey';
import { describeTlsJourney } from './tls-journey';
import { useRealStackApps } from './support';

/**
 * A tenant's own domains on the real stack: the MariaDB meta database, Redis Cluster, Kafka (the
 * webhooks' events), and two generation instances, each running the verifier: every check is taken
 * by one of them (the journey sees one event and one entry per change of status).
 */
describe('real stack: custom domains across two verifiers', () => {
  // Set before the apps start (this beforeAll runs first): the name server and the front's port are the apps' settings.
  const settings: Record<string, string> = {};
  let dns: DnsResponder;
  let front: PortForward;
  let second: App;
  beforeAll(async () => {
    dns = await DnsResponder.start();
    front = await PortForward.start();
    Object.assign(settings, domainsEnv(dns, front));
  });
  const stack = useRealStackApps('domains', { olap: 'chdb', apps: settings });

  beforeAll(async () => {
    front.to(stack().endpoints.redirect);
    second = await startApp('generation', { ...stack().shared, ...settings });
  }, 60_000);

  afterAll(async () => {
    await second?.stop();
    await front?.stop();
    await dns?.close();
  });

  describeDomainsJourney(() => ({
    generation: stack().endpoints.generation,
    redirect: stack().endpoints.redirect,
    redirectAdmin: stack().endpoints.admin.redirect,
    dns,
  }));
});

// In this file, after the journey above: never beside it (tls-journey.ts says why).
describeTlsJourney();
