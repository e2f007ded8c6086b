import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { describePeopleJourney, Mailbox } from './people-journey';
import { API_KEY, startEmbedded } from './support';

/** People, invitations and sessions on the embedded profile (`npm start`), invitations mailed to a real SMTP server started here. */
describe('embedded profile: people and sessions', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let mailbox: Mailbox;
  let dataDir: string;

  beforeAll(async () => {
    mailbox = await Mailbox.start();
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-e2e-people-'));
    ({ proc, endpoints } = await startEmbedded(dataDir, { SHORTLINK_BOOTSTRAP_API_KEY: API_KEY, SMTP_URL: mailbox.url, SIGN_IN_FAILURES_PER_ACCOUNT: '3' }));
  });

  afterAll(async () => {
    await proc?.stop();
    await mailbox?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describePeopleJourney(
    () => [endpoints.generation, endpoints.generation],
    () => mailbox,
    () => endpoints.analytics,
  );
});
