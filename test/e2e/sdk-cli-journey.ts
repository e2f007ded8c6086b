import { spawn } from 'child_process';
import { Endpoints, eventually, REPO_ROOT } from '@shortlink/harness';
import { createShortlinkClient, isShortlinkApiError, type Link, linkPages, listLinks, ShortlinkApiError, unwrap } from '@shortlink/sdk';
import { createTenant } from './support';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `npm run cli -- args` as a user runs it, in its own process, with `env` added to the environment
 * (SHORTLINK_API_URL, SHORTLINK_API_KEY); the API settings of the test process are not passed on.
 */
function cli(args: string[], env: Record<string, string>): Promise<Run> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'SHORTLINK_API_URL' && name !== 'SHORTLINK_API_KEY'));
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', 'cli', '--', ...args], { cwd: REPO_ROOT, env: { ...base, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The error a call throws (the test fails when it does not throw). */
async function failure(call: Promise<unknown>): Promise<ShortlinkApiError> {
  const outcome = await call.then(
    () => new Error('expected the call to fail'),
    (e: unknown) => e,
  );
  if (!(outcome instanceof ShortlinkApiError)) throw outcome;
  return outcome;
}

/**
 * The SDK (@shortlink/sdk) and the `shortlink` CLI against a running generation app, as their users
 * run them ("the same client is published as a TypeScript SDK package, and the CLI uses
 * it"): typed calls and problem codes, the cursor iterator over real pages, and every CLI command in
 * its own process with its settings, output and exit codes.
 */
export function describeSdkCliJourney(endpoints: () => Endpoints) {
  describe('SDK and CLI journey', () => {
    const run = Date.now().toString(36);

    it('SDK: creates, reads, edits and deletes a link with typed calls; problems come back as ShortlinkApiError with their stable code', async () => {
      const { apiKey } = await createTenant(endpoints());
      const client = createShortlinkClient({ baseUrl: endpoints().generation, apiKey });
      const alias = `sdk-${run}`;
      const created = await unwrap(
        client.POST('/api/v1/links', { body: { url: 'https://example.com/sdk', alias, title: 'SDK', tags: ['sdk', 'e2e'], maxClicks: 50 } }),
      );
      expect(created).toMatchObject({ code: alias, url: 'https://example.com/sdk', title: 'SDK', tags: ['sdk', 'e2e'], maxClicks: 50, status: 'active' });
      expect(created.shortUrl).toMatch(new RegExp(`/${alias}$`));

      const read = await unwrap(client.GET('/api/v1/links/{code}', { params: { path: { code: alias } } }));
      expect(read.code).toBe(alias);
      const edited = await unwrap(
        client.PATCH('/api/v1/links/{code}', { params: { path: { code: alias } }, body: { title: 'Edited', status: 'disabled', maxClicks: null } }),
      );
      expect(edited).toMatchObject({ title: 'Edited', status: 'disabled', maxClicks: null });

      const taken = await failure(unwrap(client.POST('/api/v1/links', { body: { url: 'https://example.com/again', alias } })));
      expect(taken).toMatchObject({ status: 409, code: 'ALIAS_TAKEN' });
      expect(taken.detail).toEqual(expect.any(String));
      const invalid = await failure(unwrap(client.POST('/api/v1/links', { body: { url: 'https://example.com/x', maxClicks: -1 } })));
      expect(invalid).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
      expect(invalid.detail).toMatch(/maxClicks/);

      expect(await unwrap(client.DELETE('/api/v1/links/{code}', { params: { path: { code: alias } } }))).toBeUndefined();
      const gone = await failure(unwrap(client.GET('/api/v1/links/{code}', { params: { path: { code: alias } } })));
      expect(gone).toMatchObject({ status: 404, code: 'LINK_NOT_FOUND' });
      expect(isShortlinkApiError(gone, 'LINK_NOT_FOUND')).toBe(true);

      const stranger = createShortlinkClient({ baseUrl: endpoints().generation, apiKey: 'sl_not_a_key_of_anyone_0123456789' });
      expect(await failure(unwrap(stranger.GET('/api/v1/links')))).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
      const nobody = createShortlinkClient({ baseUrl: 'http://127.0.0.1:9', apiKey });
      expect(await failure(unwrap(nobody.GET('/api/v1/links')))).toMatchObject({ status: 0, code: 'NETWORK_ERROR' });
    }, 60_000);

    it('SDK: the cursor iterator walks every link across real pages, newest first, with the filters', async () => {
      const { apiKey } = await createTenant(endpoints());
      const client = createShortlinkClient({ baseUrl: endpoints().generation, apiKey });
      const made: string[] = [];
      for (let i = 0; i < 7; i++) {
        const tags = i % 2 === 0 ? ['even'] : ['odd'];
        made.push((await unwrap(client.POST('/api/v1/links', { body: { url: `https://example.com/page/${i}`, alias: `pg-${run}-${i}`, tags } }))).code);
      }
      const all: Link[] = [];
      for await (const link of listLinks(client, { limit: 2 })) all.push(link);
      expect(all.map((l) => l.code)).toEqual([...made].reverse());
      const sizes: number[] = [];
      for await (const page of linkPages(client, { limit: 3 })) sizes.push(page.items.length);
      expect(sizes).toEqual([3, 3, 1]);
      const even: string[] = [];
      for await (const link of listLinks(client, { tag: 'even', limit: 2 })) even.push(link.code);
      expect(even).toEqual([6, 4, 2, 0].map((i) => `pg-${run}-${i}`));
    }, 60_000);

    it('CLI: links create, get, update, list and delete in their own processes, with SHORTLINK_API_URL and SHORTLINK_API_KEY; problems print their code and detail with exit code 1', async () => {
      const { apiKey } = await createTenant(endpoints());
      const env = { SHORTLINK_API_URL: endpoints().generation, SHORTLINK_API_KEY: apiKey };
      const alias = `cli-${run}`;

      const created = await cli(
        ['links', 'create', 'https://example.com/cli', '--alias', alias, '--title', 'From the CLI', '--tag', 'cli', '--tag', 'e2e', '--max-clicks', '9'],
        env,
      );
      expect(created).toMatchObject({ code: 0, stderr: '' });
      expect(created.stdout.trim()).toMatch(new RegExp(`^https?://\\S+/${alias}$`));

      const got = await cli(['links', 'get', alias], env);
      expect(got.code).toBe(0);
      expect(JSON.parse(got.stdout)).toMatchObject({
        code: alias,
        url: 'https://example.com/cli',
        title: 'From the CLI',
        tags: ['cli', 'e2e'],
        maxClicks: 9,
        status: 'active',
      });

      const updated = await cli(
        ['links', 'update', alias, '--url', 'https://example.com/cli/v2', '--status', 'disabled', '--clear', 'maxClicks', '--body', '{"utm":{"source":"cli"}}'],
        env,
      );
      expect(updated.code).toBe(0);
      expect(JSON.parse(updated.stdout)).toMatchObject({ url: 'https://example.com/cli/v2', status: 'disabled', maxClicks: null, utm: { source: 'cli' } });

      const other = await cli(['links', 'create', 'https://example.com/other', '--json'], env);
      expect(other.code).toBe(0);
      const otherCode = (JSON.parse(other.stdout) as Link).code;
      const listed = await cli(['links', 'list'], env);
      expect(listed.code).toBe(0);
      expect(
        listed.stdout
          .trim()
          .split('\n')
          .map((line) => line.split('\t')[0]),
      ).toEqual([otherCode, alias]);
      expect(listed.stdout).toContain(`${alias}\t`);
      expect(listed.stdout).toContain('\tdisabled\t');
      const filtered = await cli(['links', 'list', '--tag', 'cli', '--json'], env);
      expect(
        filtered.stdout
          .trim()
          .split('\n')
          .map((line) => (JSON.parse(line) as Link).code),
      ).toEqual([alias]);

      const taken = await cli(['links', 'create', 'https://example.com/again', '--alias', alias], env);
      expect(taken.code).toBe(1);
      expect(taken.stdout).toBe('');
      expect(taken.stderr).toMatch(/^error: ALIAS_TAKEN \(409\): \S/);
      const invalid = await cli(['links', 'create', 'https://example.com/x', '--body', '{"maxClicks":-1}'], env);
      expect(invalid.code).toBe(1);
      expect(invalid.stderr).toMatch(/^error: VALIDATION_FAILED \(400\): maxClicks \S/);

      const deleted = await cli(['links', 'delete', alias], env);
      expect(deleted).toMatchObject({ code: 0, stdout: `deleted ${alias}\n` });
      const missing = await cli(['links', 'get', alias], env);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/^error: LINK_NOT_FOUND \(404\): \S/);
    }, 120_000);

    it('CLI: keys create, list and revoke; a read-only key cannot write (INSUFFICIENT_SCOPE), a revoked one is refused (UNAUTHENTICATED); usage, a missing key and an unreachable API exit 2 and 3', async () => {
      const { apiKey } = await createTenant(endpoints());
      const env = { SHORTLINK_API_URL: endpoints().generation, SHORTLINK_API_KEY: apiKey };

      const issued = await cli(['keys', 'create', `reader-${run}`, '--scope', 'links:read'], env);
      expect(issued.code).toBe(0);
      const secret = issued.stdout.trim();
      expect(secret).toMatch(/^sl_\S+$/);
      expect(issued.stderr).toContain('shown this once');

      const keys = await cli(['keys', 'list', '--json'], env);
      expect(keys.code).toBe(0);
      const reader = keys.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { id: string; name: string; scopes: string[]; revokedAt: string | null })
        .find((k) => k.name === `reader-${run}`)!;
      expect(reader).toMatchObject({ scopes: ['links:read'], revokedAt: null });
      const table = await cli(['keys', 'list'], env);
      expect(table.stdout).toContain(`${reader.id}\treader-${run}\t`);
      expect(table.stdout).toMatch(new RegExp(`${reader.id}\\t.*\\tlinks:read\\tactive`));

      const readerEnv = { ...env, SHORTLINK_API_KEY: secret };
      expect((await cli(['links', 'list'], readerEnv)).code).toBe(0);
      const refused = await cli(['links', 'create', 'https://example.com/nope'], readerEnv);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^error: INSUFFICIENT_SCOPE \(403\): \S/);

      const revoked = await cli(['keys', 'revoke', reader.id], env);
      expect(revoked).toMatchObject({ code: 0, stdout: `revoked ${reader.id}\n` });
      const after = await cli(['keys', 'list'], env);
      expect(after.stdout).toMatch(new RegExp(`${reader.id}\\t.*\\trevoked`));
      await eventually('the revoked key is refused', async () => {
        const denied = await cli(['links', 'list'], readerEnv);
        return denied.code === 1 && /^error: UNAUTHENTICATED \(401\): /.test(denied.stderr);
      });

      const noKey = await cli(['links', 'list'], { SHORTLINK_API_URL: endpoints().generation });
      expect(noKey.code).toBe(2);
      expect(noKey.stderr).toContain('SHORTLINK_API_KEY is not set');
      const usage = await cli(['links', 'frobnicate'], env);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('unknown command: links frobnicate');
      const badFlag = await cli(['links', 'create', 'https://example.com/', '--max-clicks', 'many'], env);
      expect(badFlag.code).toBe(2);
      expect(badFlag.stderr).toContain('--max-clicks takes a whole number');
      const down = await cli(['links', 'list', '--api', 'http://127.0.0.1:9'], env);
      expect(down.code).toBe(3);
      expect(down.stderr).toMatch(/^error: NETWORK_ERROR: The API did not answer/);
    }, 120_000);
  });
}
