import { randomUUID } from 'crypto';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { API_KEY, restartEmbedded, startEmbedded } from './support';
import { api } from './tenant-journey';
import { describeUrlPolicyJourney } from './url-policy-journey';

/** Domain and URL-policy items on the embedded profile (`npm start`), then again with the DNS check on. */
describe('embedded profile: domains and the URL policy', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-url-policy-'));
    ({ proc, endpoints, env } = await startEmbedded(dataDir, { SHORTLINK_BOOTSTRAP_API_KEY: API_KEY }));
  });

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describeUrlPolicyJourney(() => endpoints.generation);

  it('with URL_DNS_CHECK=on, resolves the targets of options like url, on edit and bulk edit', async () => {
    // Links made while the check is off: with it on, no name of the public internet resolves on an offline machine.
    const { apiKey } = (await api(endpoints.generation, 'POST', '/api/v1/admin/tenants', API_KEY, { name: 'dns', plan: 'paid' })).body as { apiKey: string };
    const made = await api(endpoints.generation, 'POST', '/api/v1/links', apiKey, { url: 'https://example.com/dns' });
    expect(made.status).toBe(201);
    proc = await restartEmbedded(proc, endpoints, { ...env, URL_DNS_CHECK: 'on' }); // the spelling a comment suggested, refused at boot before
    // `.invalid` never resolves (RFC 6761), online or not; it passes every check but DNS.
    const nowhere = `https://${randomUUID().slice(0, 8)}.invalid/x`;
    const edits = [{ variants: [{ url: nowhere, weight: 1 }] }, { geoTargets: { DE: nowhere } }, { deviceTargets: { ios: nowhere } }, { url: nowhere }];
    for (const edit of edits) {
      const res = await api(endpoints.generation, 'PATCH', `/api/v1/links/${made.body.code}`, apiKey, edit);
      expect({ edit, status: res.status, code: res.body.code, reason: res.body.reason }).toEqual({
        edit,
        status: 400,
        code: 'URL_NOT_ALLOWED',
        reason: 'unresolvable',
      });
    }
    const bulk = await fetch(`${endpoints.generation}/api/v1/links/bulk`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ links: [made.body.code], edit: { geoTargets: { FR: nowhere } } }),
    });
    expect(JSON.parse((await bulk.text()).trim())).toMatchObject({ status: 400, problem: { code: 'URL_NOT_ALLOWED', reason: 'unresolvable' } });
    expect((await api(endpoints.generation, 'GET', `/api/v1/links/${made.body.code}`, apiKey)).body).toMatchObject({
      url: 'https://example.com/dns',
      version: 1,
    });
  });
});
