import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { API_KEY, createTenant, startEmbedded } from './support';
import { describeBitlyJourney } from './bitly-journey';
import { describeYourlsJourney } from './yourls-journey';

/**
 * Compatibility APIs on the embedded profile (`npm start`): the YOURLS API with the
 * `yourls` PyPI client, Bitly's v4 subset with the `bitly` npm client behind a TLS front; click
 * counts from the chdb store the process shares.
 */
describe('embedded profile: compatibility APIs', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-compat-'));
    ({ proc, endpoints } = await startEmbedded(dataDir, { SHORTLINK_BOOTSTRAP_API_KEY: API_KEY, CLICK_BUFFER_FLUSH_MS: '50' }));
  });

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describeYourlsJourney(
    () => endpoints,
    () => createTenant(endpoints),
    () => createTenant(endpoints, 'free'),
  );
  describeBitlyJourney(
    () => endpoints,
    () => createTenant(endpoints),
  );
});
