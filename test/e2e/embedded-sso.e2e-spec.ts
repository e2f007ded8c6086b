import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { SecretBox } from '@shortlink/people-domain';
import { describeSsoAddressJourney, IssuerWriter, SSO_ADDRESS_ENV } from './sso-addresses-journey';
import { describeSsoJourney, OidcTestProvider, SSO_ENV } from './sso-journey';
import { API_KEY, startEmbedded } from './support';

/**
 * Single sign-on on the embedded profile (`npm start`), against a real OpenID provider started here;
 * and where it may connect, on a second installation that does not allow insecure issuers (its SSO
 * settings written into its SQLite meta database past the API when a test needs an internal issuer).
 */
describe('embedded profile: single sign-on with OpenID Connect', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let provider: OidcTestProvider;
  let dataDir: string;
  let strict: { proc: RunningProcess; endpoints: Endpoints; dataDir: string };

  beforeAll(async () => {
    provider = await OidcTestProvider.start();
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-e2e-sso-'));
    const strictDir = mkdtempSync(join(tmpdir(), 'shortlink-e2e-sso-strict-'));
    const [open, closed] = await Promise.all([
      startEmbedded(dataDir, { SHORTLINK_BOOTSTRAP_API_KEY: API_KEY, ...SSO_ENV }),
      startEmbedded(strictDir, { SHORTLINK_BOOTSTRAP_API_KEY: API_KEY, ...SSO_ADDRESS_ENV }),
    ]);
    ({ proc, endpoints } = open);
    strict = { ...closed, dataDir: strictDir };
  });

  afterAll(async () => {
    await Promise.all([proc?.stop(), strict?.proc.stop()]);
    await provider?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    if (strict) rmSync(strict.dataDir, { recursive: true, force: true });
  });

  describeSsoJourney(
    () => [endpoints.generation, endpoints.generation],
    () => provider,
  );

  /** The row as SqliteSsoStore writes it, the secret sealed with the installation's own code secret. */
  const writeIssuer: IssuerWriter = async (tenantId, issuer) => {
    const codeSecret = readFileSync(join(strict.dataDir, 'secrets', 'code-secret'), 'utf8').trim();
    const db = new Database(join(strict.dataDir, 'meta.sqlite'));
    try {
      db.pragma('busy_timeout = 5000');
      const now = Date.now();
      db.prepare(
        `INSERT OR REPLACE INTO tenant_sso (tenant_id, issuer, client_id, client_secret, allowed_domains, default_role, created_at, updated_at)
         VALUES (?, ?, 'shortlink', ?, '["example.com"]', 'viewer', ?, ?)`,
      ).run(tenantId, issuer, new SecretBox(codeSecret, 'sso v1').seal(tenantId, 'a client secret'), now, now);
    } finally {
      db.close();
    }
  };
  describeSsoAddressJourney(
    () => strict.endpoints.generation,
    () => writeIssuer,
  );
});
