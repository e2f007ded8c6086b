import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { API_KEY, createLink, Endpoints, freePort, redirectOf, RunningProcess, startProcess, waitHealthy } from './support';
import { describeUserJourney } from './user-journey';

/** The README's `npm start`: three apps in one process, SQLite + in-process cache/bus + chdb. */
describe('embedded profile (npm start)', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-e2e-'));
    const [g, r, a] = [await freePort(), await freePort(), await freePort()];
    endpoints = { generation: `http://127.0.0.1:${g}`, redirect: `http://127.0.0.1:${r}`, analytics: `http://127.0.0.1:${a}` };
    env = {
      SHORTLINK_DATA_DIR: dataDir, GENERATION_PORT: String(g), REDIRECT_PORT: String(r), ANALYTICS_PORT: String(a),
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY, LOG_LEVEL: 'warn',
      DB_DRIVER: 'sqlite', CACHE_DRIVER: 'memory', BUS_DRIVER: 'memory', OLAP_DRIVER: 'chdb',
    };
    proc = startProcess('tools/embedded/src/main.ts', env);
    await Promise.all(Object.values(endpoints).map((base) => waitHealthy(base, proc)));
  });

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describeUserJourney(() => endpoints);

  it('prints the three URLs and a ready-to-paste curl', () => {
    expect(proc.output()).toContain(endpoints.generation);
    expect(proc.output()).toContain(endpoints.redirect);
    expect(proc.output()).toContain(endpoints.analytics);
    expect(proc.output()).toMatch(/curl -s -X POST .*\/api\/v1\/links/);
  });

  it('keeps links across a restart on the same data directory', async () => {
    const created = await createLink(endpoints, { url: 'https://example.com/survives-restart' });
    expect(created.status).toBe(201);
    await proc.stop();
    proc = startProcess('tools/embedded/src/main.ts', env);
    await Promise.all(Object.values(endpoints).map((base) => waitHealthy(base, proc)));
    const res = await redirectOf(endpoints, created.body.code as string);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://example.com/survives-restart');
  });
});
