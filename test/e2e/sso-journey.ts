import { ChildProcess, spawn } from 'child_process';
import { createServer, Server, Socket } from 'net';
import { join } from 'path';
import { freePort } from '@shortlink/harness';
import { API_KEY } from './support';
import { api } from './tenant-journey';

/** The redirect URI the apps and the provider know (SSO_CALLBACK_URL); the test takes the browser's place and brings the answer to an app itself. */
export const SSO_CALLBACK_URL = 'http://sso.shortlink.test/api/v1/auth/sso/callback';
const CLIENT_ID = 'shortlink-e2e';
const CLIENT_SECRET = 'an e2e client secret of the provider';

/** The settings the apps of the SSO journey run with. */
export const SSO_ENV = {
  SSO_CALLBACK_URL,
  SSO_ALLOW_INSECURE_ISSUERS: 'true',
  SSO_TIMEOUT_SECONDS: '2',
  SHORTLINK_CONSOLE_URL: 'http://console.shortlink.test',
};

/**
 * A real OpenID provider (oidc-provider, test/e2e/oidc-test-provider.mjs) in a child process on
 * 127.0.0.1, with one client (`clientId`, `clientSecret`) whose redirect URI is `redirectUri`
 * (the apps' SSO_CALLBACK_URL; the console e2e gives the app's own callback, for a real browser).
 */
export class OidcTestProvider {
  readonly clientId = CLIENT_ID;
  readonly clientSecret = CLIENT_SECRET;

  private constructor(
    private readonly child: ChildProcess,
    readonly issuer: string,
  ) {}

  static async start(redirectUri: string = SSO_CALLBACK_URL): Promise<OidcTestProvider> {
    const port = await freePort();
    const child = spawn(process.execPath, [join(__dirname, 'oidc-test-provider.mjs')], {
      env: { ...process.env, OIDC_PORT: String(port), OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: CLIENT_SECRET, OIDC_REDIRECT_URI: redirectUri },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let errors = '';
    child.stderr!.on('data', (d: Buffer) => (errors += d.toString()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the OpenID provider did not start: ${errors}`)), 20_000);
      child.stdout!.on('data', (d: Buffer) => {
        if (d.toString().includes('READY')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.on('exit', (code) => reject(new Error(`the OpenID provider exited (${code}): ${errors}`)));
    });
    return new OidcTestProvider(child, `http://127.0.0.1:${port}`);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    await exited;
  }
}

/** A TCP server that accepts and never answers: a provider that hangs. */
async function silentServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => sockets.add(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** A browser's cookie jar, enough for one provider on one host: name → value. */
class Jar {
  private readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      this.cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * What a browser does between the app's start and its callback: follow the redirects to the
 * provider, fill its login form (any password: the development interactions) and its consent form,
 * until the provider sends it to the redirect URI. Answers that URL, with the code and the state.
 */
async function signInAtProvider(authorizationUrl: string, email: string): Promise<URL> {
  const jar = new Jar();
  let url = authorizationUrl;
  for (let step = 0; step < 12; step++) {
    if (url.startsWith(SSO_CALLBACK_URL)) return new URL(url);
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.take(res);
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url).toString();
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`the provider answered ${res.status} at ${url}: ${html.slice(0, 300)}`);
    const consent = /name="prompt" value="consent"/.test(html);
    const form = new URLSearchParams(consent ? { prompt: 'consent' } : { prompt: 'login', login: email, password: 'any password' });
    const posted = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    jar.take(posted);
    if (posted.status < 300 || posted.status >= 400) throw new Error(`the provider answered ${posted.status} to the ${consent ? 'consent' : 'login'} form`);
    url = new URL(posted.headers.get('location')!, url).toString();
  }
  throw new Error('the provider never sent the browser back');
}

/** The app's start: its 302 to the provider and the pending cookie (`sl_sso=…`). */
async function start(base: string, tenantId: string) {
  const res = await fetch(`${base}/api/v1/auth/sso/${tenantId}/start`, { redirect: 'manual' });
  const setCookie = res.headers.get('set-cookie') ?? '';
  return { res, location: res.headers.get('location') ?? '', setCookie, pending: setCookie.split(';')[0] };
}

/** The provider's redirect brought to an app, with the browser's pending cookie. */
async function callback(base: string, providerAnswer: URL, pendingCookie: string | null) {
  const res = await fetch(`${base}/api/v1/auth/sso/callback${providerAnswer.search}`, {
    redirect: 'manual',
    headers: pendingCookie ? { cookie: pendingCookie } : {},
  });
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- problem bodies, checked by the assertions that read them
  return { res, body: text && res.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as Record<string, any>) : {} };
}

/**
 * Single sign-on end to end against a real OpenID provider (oidc-provider) on 127.0.0.1: an owner's
 * key configures it; a person of an allowed domain signs in through the provider's forms over HTTP
 * (PKCE, state, nonce) and arrives with a session, created with the configured role; a wrong state,
 * a replayed code, an email of another domain, and a provider that is down or hangs are each
 * answered with problem+json and a stable code, never a 500 or a hang. `bases` gives two generation
 * instances (the same one twice on the embedded profile): sign-in starts on one and ends on the other.
 */
export function describeSsoJourney(bases: () => readonly [string, string], provider: () => OidcTestProvider) {
  describe('single sign-on with OpenID Connect', () => {
    let tenantId: string;
    let tenantKey: string;
    const a = () => bases()[0];
    const b = () => bases()[1];
    const stamp = Date.now();
    const domain = `sso-${stamp}.example.com`;
    const ana = `ana@${domain}`;
    let replay: { answer: URL; pending: string };

    beforeAll(async () => {
      const created = await api(a(), 'POST', '/api/v1/admin/tenants', API_KEY, { name: 'SSO Inc', plan: 'paid' });
      expect(created.status).toBe(201);
      tenantId = created.body.tenant.id;
      tenantKey = created.body.apiKey;
    });

    it('lets the owner configure the provider; the secret is never answered; bad settings are 400', async () => {
      expect((await api(a(), 'GET', '/api/v1/sso', tenantKey)).body.code).toBe('SSO_NOT_CONFIGURED');
      const notStarted = await start(a(), tenantId);
      expect(notStarted.res.status).toBe(404);
      const body = {
        issuer: provider().issuer,
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        allowedDomains: [domain.toUpperCase()],
        defaultRole: 'editor',
      };
      for (const bad of [{ defaultRole: 'owner' }, { allowedDomains: [] }, { issuer: 'ftp://example.com' }, { clientSecret: undefined }]) {
        const refused = await api(a(), 'PUT', '/api/v1/sso', tenantKey, { ...body, ...bad });
        expect(refused.status).toBe(400);
        expect(refused.headers.get('content-type')).toContain('application/problem+json');
        expect(refused.body.code).toBe('VALIDATION_FAILED');
      }
      const put = await api(a(), 'PUT', '/api/v1/sso', tenantKey, body);
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({
        issuer: provider().issuer,
        clientId: CLIENT_ID,
        clientSecretSet: true,
        allowedDomains: [domain],
        defaultRole: 'editor',
      });
      expect(put.body.callbackUrl).toBe(SSO_CALLBACK_URL);
      expect(put.text).not.toContain(CLIENT_SECRET);
      const read = await api(b(), 'GET', '/api/v1/sso', tenantKey);
      expect(read.body).toEqual(put.body);
      // A change without the secret keeps it.
      expect((await api(b(), 'PUT', '/api/v1/sso', tenantKey, { ...body, clientSecret: undefined })).status).toBe(200);
    });

    it('signs a new person in through the provider (PKCE, state, nonce), creates them with the configured role, and opens a session', async () => {
      const started = await start(a(), tenantId);
      expect(started.res.status).toBe(302);
      expect(started.setCookie).toMatch(/^sl_sso=v1\.[A-Za-z0-9_-]+; Path=\/api\/v1\/auth\/sso; Max-Age=600; HttpOnly; SameSite=Lax$/);
      const authorize = new URL(started.location);
      expect(authorize.origin).toBe(provider().issuer);
      expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
        client_id: CLIENT_ID,
        redirect_uri: SSO_CALLBACK_URL,
        response_type: 'code',
        code_challenge_method: 'S256',
      });
      for (const p of ['state', 'nonce', 'code_challenge']) expect(authorize.searchParams.get(p)).toMatch(/^[A-Za-z0-9_-]{43}$/);

      const answer = await signInAtProvider(started.location, ana);
      expect(answer.searchParams.get('code')).toBeTruthy();
      // The sign-in ends on the other instance: the pending state is in the cookie, not in one process.
      const done = await callback(b(), answer, started.pending);
      expect(done.res.status).toBe(302);
      expect(done.res.headers.get('location')).toBe('http://console.shortlink.test/');
      const cookies = done.res.headers.getSetCookie();
      const session = cookies.find((c) => c.startsWith('sl_session='))!;
      expect(session).toMatch(/^sl_session=ses_[A-Za-z0-9_-]+; Path=\/api; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
      expect(cookies).toContain('sl_sso=; Path=/api/v1/auth/sso; Max-Age=0; HttpOnly; SameSite=Lax');
      const cookie = session.split(';')[0];
      const me = await fetch(`${a()}/api/v1/me`, { headers: { cookie } });
      expect(me.status).toBe(200);
      const who = (await me.json()) as { member: { id: string; email: string; status: string }; role: string; tenant: { id: string }; csrfToken: string };
      expect(who).toMatchObject({ member: { email: ana, status: 'active' }, role: 'editor', tenant: { id: tenantId } });
      // An editor writes links with the session and its CSRF token.
      const made = await fetch(`${b()}/api/v1/links`, {
        method: 'POST',
        headers: { cookie, 'x-csrf-token': who.csrfToken, 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'https://example.com/sso' }),
      });
      expect(made.status).toBe(201);
      replay = { answer, pending: started.pending };

      // The next sign-in finds the same member.
      const again = await start(b(), tenantId);
      const second = await callback(a(), await signInAtProvider(again.location, ana), again.pending);
      expect(second.res.status).toBe(302);
      const members = (await api(a(), 'GET', '/api/v1/members', tenantKey)).body.members as Array<{ id: string; email: string; role: string }>;
      expect(members.filter((m) => m.email === ana)).toEqual([expect.objectContaining({ id: who.member.id, role: 'editor' })]);
      const log = (await api(a(), 'GET', '/api/v1/audit-log?limit=100', tenantKey)).body.entries as Array<{
        action: string;
        actor: { name: string };
        details: Record<string, unknown> | null;
      }>;
      expect(log.filter((e) => e.action === 'auth.signed_in' && e.actor.name === ana && e.details?.method === 'oidc')).toHaveLength(2);
      expect(log.filter((e) => e.action === 'member.joined' && e.actor.name === ana)).toHaveLength(1);
      expect(log.filter((e) => e.action === 'sso.settings_changed').length).toBeGreaterThanOrEqual(2);
    });

    it('refuses a replayed code (401 SSO_CODE_REJECTED), a wrong state and a missing or forged pending cookie (400 SSO_STATE_MISMATCH)', async () => {
      const replayed = await callback(a(), replay.answer, replay.pending);
      expect(replayed.res.status).toBe(401);
      expect(replayed.res.headers.get('content-type')).toContain('application/problem+json');
      expect(replayed.body.code).toBe('SSO_CODE_REJECTED');

      const started = await start(a(), tenantId);
      const answer = await signInAtProvider(started.location, ana);
      const wrongState = new URL(answer);
      wrongState.searchParams.set('state', 'x'.repeat(43));
      const wrong = await callback(b(), wrongState, started.pending);
      expect(wrong.res.status).toBe(400);
      expect(wrong.body.code).toBe('SSO_STATE_MISMATCH');
      // Another browser's pending cookie (a login CSRF) and none at all.
      const other = await start(a(), tenantId);
      expect((await callback(b(), answer, other.pending)).body.code).toBe('SSO_STATE_MISMATCH');
      expect((await callback(b(), answer, null)).body.code).toBe('SSO_STATE_MISMATCH');
      expect((await callback(b(), answer, 'sl_sso=v1.forged')).body.code).toBe('SSO_STATE_MISMATCH');
      // A browser gets the console's sign-in with the reason instead of problem+json, and its pending cookie cleared.
      const browser = await fetch(`${b()}/api/v1/auth/sso/callback${answer.search}`, {
        redirect: 'manual',
        headers: { cookie: other.pending, accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
      });
      expect(browser.status).toBe(302);
      expect(browser.headers.get('location')).toBe('http://console.shortlink.test/?sso_error=SSO_STATE_MISMATCH');
      expect(browser.headers.getSetCookie().filter((c) => c.startsWith('sl_sso='))).toEqual([
        'sl_sso=; Path=/api/v1/auth/sso; Max-Age=0; HttpOnly; SameSite=Lax',
      ]);
      expect(browser.headers.getSetCookie().some((c) => c.startsWith('sl_session='))).toBe(false);
      // The provider refusing (the person cancelled) is the provider's answer, not a 500.
      const cancelled = new URL(SSO_CALLBACK_URL);
      cancelled.searchParams.set('error', 'access_denied');
      cancelled.searchParams.set('state', new URL(other.location).searchParams.get('state')!);
      expect((await callback(a(), cancelled, other.pending)).body.code).toBe('SSO_CODE_REJECTED');
    });

    it('refuses an email outside the allowed domains (403 SSO_EMAIL_DOMAIN_REFUSED) and creates no member', async () => {
      const eve = `eve@elsewhere-${stamp}.test`;
      const started = await start(b(), tenantId);
      const refused = await callback(a(), await signInAtProvider(started.location, eve), started.pending);
      expect(refused.res.status).toBe(403);
      expect(refused.res.headers.get('content-type')).toContain('application/problem+json');
      expect(refused.body.code).toBe('SSO_EMAIL_DOMAIN_REFUSED');
      expect(refused.res.headers.getSetCookie().some((c) => c.startsWith('sl_session='))).toBe(false);
      const members = (await api(a(), 'GET', '/api/v1/members', tenantKey)).body.members as Array<{ email: string }>;
      expect(members.map((m) => m.email)).not.toContain(eve);
      const log = (await api(a(), 'GET', '/api/v1/audit-log?action=auth.sign_in_failed&limit=20', tenantKey)).body.entries as Array<{
        actor: { name: string };
        details: Record<string, unknown>;
      }>;
      expect(log.some((e) => e.actor.name === eve && e.details.reason === 'email_domain_refused')).toBe(true);
    });

    it('answers a provider that is down or hangs with 503 SSO_PROVIDER_UNAVAILABLE within SSO_TIMEOUT_SECONDS, never a 500', async () => {
      const down = await api(a(), 'POST', '/api/v1/admin/tenants', API_KEY, { name: 'SSO down', plan: 'free' });
      const closedPort = `http://127.0.0.1:${await freePort()}`;
      const settings = { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, allowedDomains: [domain] };
      expect((await api(a(), 'PUT', '/api/v1/sso', down.body.apiKey, { ...settings, issuer: closedPort })).status).toBe(200);
      const refused = await start(a(), down.body.tenant.id);
      expect(refused.res.status).toBe(503);
      expect(refused.res.headers.get('content-type')).toContain('application/problem+json');
      expect(((await refused.res.json()) as { code: string }).code).toBe('SSO_PROVIDER_UNAVAILABLE');

      const silent = await silentServer();
      try {
        expect((await api(a(), 'PUT', '/api/v1/sso', down.body.apiKey, { ...settings, issuer: silent.url })).status).toBe(200);
        const began = Date.now();
        const hung = await start(b(), down.body.tenant.id);
        expect(hung.res.status).toBe(503);
        expect(((await hung.res.json()) as { code: string }).code).toBe('SSO_PROVIDER_UNAVAILABLE');
        expect(Date.now() - began).toBeLessThan(6000); // SSO_TIMEOUT_SECONDS=2
      } finally {
        await silent.close();
      }

      // The provider stops between the start and the callback: the code cannot be exchanged.
      const started = await start(a(), tenantId);
      const answer = await signInAtProvider(started.location, ana);
      await provider().stop();
      const gone = await callback(b(), answer, started.pending);
      expect(gone.res.status).toBe(503);
      expect(gone.body.code).toBe('SSO_PROVIDER_UNAVAILABLE');
      // A tenant without SSO, and SSO turned off.
      expect((await api(a(), 'DELETE', '/api/v1/sso', tenantKey)).status).toBe(204);
      expect((await start(b(), tenantId)).res.status).toBe(404);
      expect((await api(a(), 'DELETE', '/api/v1/sso', tenantKey)).body.code).toBe('SSO_NOT_CONFIGURED');
    });
  });
}
