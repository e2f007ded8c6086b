import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { describeSsoJourney, OidcTestProvider, SSO_ENV } from './sso-journey';
import { API_KEY, startEmbedded } from './support';

/** Single sign-on on the embedded profile (`npm start`), against a real OpenID provider started here. */
describe('embedded profile: single sign-on with OpenID Connect', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let provider: OidcTestProvider;
  let dataDir: string;

  beforeAll(async () => {
    provider = await OidcTestProvider.start();
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-e2e-sso-'));
    ({ proc, endpoints } = await startEmbedded(dataDir, { SHORTLINK_BOOTSTRAP_API_KEY: API_KEY, ...SSO_ENV }));
  });

  afterAll(async () => {
    await proc?.stop();
    await provider?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describeSsoJourney(
    () => [endpoints.generation, endpoints.generation],
    () => provider,
  );
});
