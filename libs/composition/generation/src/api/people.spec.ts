import { InProcessGeneration, startGenerationInProcess } from '../testing/in-process-generation';

/** Members, sign-in and the session guard in process (Fastify's inject) on the embedded adapters; the journeys over HTTP are test/e2e/people-journey.ts. */
/**
 * Each test signs people in for real: an accepted invitation hashes a password and a sign-in verifies one, argon2id at
 * OWASP's minimum (19 MiB, 2 passes: ~50 ms of one core each, by design: docs/design.md, "Security model"), 2 to 6 of them
 * a test, besides the requests. That work, not the machine, sets the timeout: 1 s of CPU at most, given 60 s, which a CPU
 * hog on both cores beside jest's workers does not reach (jest's 5 s did, three times in six runs).
 */
jest.setTimeout(60_000);

describe('people API: members, sessions, the guard', () => {
  const OPERATOR = 'sl_people_api_spec_operator_0123456789';
  const PASSWORD = 'lamp post in the garden';
  let generation: InProcessGeneration;

  beforeAll(async () => {
    generation = await startGenerationInProcess(OPERATOR, { SESSION_COOKIE_SECURE: 'on' });
    // The first time through the sign-in paths (the argon2 pool, the routes' first requests) cost the first test 0.5 s on an
    // idle machine and over jest's 5 s under a CPU hog: spent here, once, so that each test measures only its own steps.
    const warm = await tenantWithOwner('warm-up@example.com');
    await call(null, 'GET', '/api/v1/me/sessions', undefined, { cookie: warm.cookie, 'user-agent': 'Mozilla/5.0 (warm-up)' });
  }, 60_000);

  afterAll(() => generation?.close());

  const call = (key: string | null, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown, headers?: Record<string, string>) =>
    generation.call(key, method, url, body, headers);

  /**
   * A tenant with an owner who signed in, and its first key, which the owner adopted (it acts for
   * the owner: a key of no person keeps only data scopes once the tenant has an owner).
   */
  async function tenantWithOwner(email: string) {
    const created = (await call(OPERATOR, 'POST', '/api/v1/admin/tenants', { name: 'Acme', plan: 'paid', ownerEmail: email })).json();
    expect(created.owner.invitation.mailed).toBe(false); // no SMTP_URL: the token is only in the answer
    expect((await call(null, 'POST', '/api/v1/auth/accept', { token: created.owner.invitation.token, password: PASSWORD })).statusCode).toBe(200);
    const session = await signIn(email);
    const adopted = await call(null, 'POST', `/api/v1/keys/${created.key.id}/transfer`, { memberId: created.owner.member.id }, withSession(session));
    expect(adopted.json()).toMatchObject({ actsFor: { email }, status: 'active' });
    return { tenantId: created.tenant.id as string, key: created.apiKey as string, ...session };
  }

  async function signIn(email: string) {
    const res = await call(null, 'POST', '/api/v1/auth/login', { email, password: PASSWORD });
    expect(res.statusCode).toBe(200);
    const setCookie = String(res.headers['set-cookie']);
    return { setCookie, cookie: setCookie.split(';')[0], csrf: res.json().csrfToken as string };
  }

  const withSession = (s: { cookie: string; csrf: string }, csrf = true) => ({ cookie: s.cookie, ...(csrf ? { 'x-csrf-token': s.csrf } : {}) });

  it('says what an invitation is for, then signs the person in on acceptance; a spent one is INVITATION_INVALID', async () => {
    const created = (await call(OPERATOR, 'POST', '/api/v1/admin/tenants', { name: 'Invited Inc', plan: 'paid', ownerEmail: 'new-owner@example.com' })).json();
    const token = created.owner.invitation.token as string;
    const about = await call(null, 'POST', '/api/v1/auth/invitation', { token });
    expect(about.statusCode).toBe(200);
    expect(about.json()).toEqual({
      email: 'new-owner@example.com',
      role: 'owner',
      tenant: { name: 'Invited Inc' },
      expiresAt: created.owner.invitation.expiresAt,
      passwordMinLength: 12,
    });
    const accepted = await call(
      null,
      'POST',
      '/api/v1/auth/accept',
      { token, password: PASSWORD },
      {
        'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
      },
    );
    expect(accepted.statusCode).toBe(200);
    expect(accepted.json()).toMatchObject({ member: { email: 'new-owner@example.com', status: 'active' }, csrfToken: expect.any(String) });
    const cookie = String(accepted.headers['set-cookie']).split(';')[0];
    expect((await call(null, 'GET', '/api/v1/me', undefined, { cookie })).json()).toMatchObject({ member: { email: 'new-owner@example.com' }, role: 'owner' });
    // The session keeps what it was opened from: the device and browser of its user agent (127.0.0.1 has no place).
    const listed = (await call(null, 'GET', '/api/v1/me/sessions', undefined, { cookie })).json().sessions;
    expect(listed).toEqual([
      expect.objectContaining({ current: true, client: { device: 'mobile', browser: 'Mobile Safari', os: 'iOS', country: null, region: null, city: null } }),
    ]);
    for (const spent of [token, 'inv_unknown', 'not-a-token'])
      expect((await call(null, 'POST', '/api/v1/auth/invitation', { token: spent })).json()).toMatchObject({ status: 400, code: 'INVITATION_INVALID' });
  });

  it('sets a Secure cookie when told so, and a key wins over a cookie sent beside it', async () => {
    const owner = await tenantWithOwner('secure-owner@example.com');
    expect(owner.setCookie).toMatch(/; HttpOnly; SameSite=Lax; Secure$/);
    const both = await call(OPERATOR, 'GET', '/api/v1/me', undefined, { cookie: owner.cookie });
    expect(both.json()).toMatchObject({ member: null, key: { name: 'bootstrap' } });
    const forged = await call(null, 'GET', '/api/v1/me', undefined, { cookie: 'sl_session=ses_forged' });
    expect(forged.statusCode).toBe(401);
    expect((await call(null, 'GET', '/api/v1/me')).statusCode).toBe(401);
  });

  describe('with SESSION_COOKIE_SECURE=auto', () => {
    // An app of its own, started before the test (a boot took over jest's 5 s under a CPU hog when the test started it).
    let proxied: InProcessGeneration;
    beforeAll(async () => {
      proxied = await startGenerationInProcess(OPERATOR, { TRUSTED_PROXIES: '127.0.0.1' });
    }, 60_000);
    afterAll(() => proxied?.close());

    it('marks the cookie Secure only when a trusted proxy says the client came over https', async () => {
      const { invitation } = (
        await proxied.call(OPERATOR, 'POST', '/api/v1/admin/tenants', { name: 'Proxied', plan: 'free', ownerEmail: 'proxied@example.com' })
      ).json().owner;
      await proxied.call(null, 'POST', '/api/v1/auth/accept', { token: invitation.token, password: PASSWORD });
      const login = (headers: Record<string, string>) =>
        proxied.call(null, 'POST', '/api/v1/auth/login', { email: 'proxied@example.com', password: PASSWORD }, headers);
      expect(String((await login({ 'x-forwarded-proto': 'https' })).headers['set-cookie'])).toMatch(/; Secure$/);
      expect(String((await login({})).headers['set-cookie'])).not.toContain('Secure');
    });
  });

  it('lets an admin manage members other than owners, never an owner', async () => {
    const owner = await tenantWithOwner('owner@acme.example');
    const invited = (await call(owner.key, 'POST', '/api/v1/members', { email: 'admin@acme.example', role: 'admin' })).json();
    await call(null, 'POST', '/api/v1/auth/accept', { token: invited.invitation.token, password: PASSWORD });
    const admin = await signIn('admin@acme.example');
    const asAdmin = (method: 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) => call(null, method, url, body, withSession(admin));
    expect((await asAdmin('POST', '/api/v1/members', { email: 'boss@acme.example', role: 'owner' })).json()).toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
    const ownerId = (await call(owner.key, 'GET', '/api/v1/members')).json().members.find((m: { role: string }) => m.role === 'owner').id;
    expect((await asAdmin('DELETE', `/api/v1/members/${ownerId}`)).statusCode).toBe(403);
    expect((await asAdmin('PATCH', `/api/v1/members/${ownerId}`, { role: 'viewer' })).statusCode).toBe(403);
    const editor = await asAdmin('POST', '/api/v1/members', { email: 'ed@acme.example', role: 'editor' });
    expect(editor.statusCode).toBe(201);
    expect((await asAdmin('DELETE', `/api/v1/members/${editor.json().member.id}`)).statusCode).toBe(204);
  });

  it('refuses a session of a suspended tenant with 403 TENANT_SUSPENDED', async () => {
    const owner = await tenantWithOwner('suspended-owner@example.com');
    expect((await call(OPERATOR, 'PATCH', `/api/v1/admin/tenants/${owner.tenantId}`, { status: 'suspended' })).statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 1100)); // past the session cache
    const refused = await call(null, 'GET', '/api/v1/me', undefined, withSession(owner, false));
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('TENANT_SUSPENDED');
  });

  it('publishes the routes, the session cookie scheme and the unsecured sign-in routes in the OpenAPI document', async () => {
    const doc = (await call(null, 'GET', '/docs/openapi.json')).json();
    expect(doc.components.securitySchemes.sessionCookie).toEqual({ type: 'apiKey', in: 'cookie', name: 'sl_session' });
    expect(doc.paths['/api/v1/links'].post.security).toEqual([{ apiKey: [] }, { sessionCookie: [] }]);
    expect(doc.paths['/api/v1/auth/login'].post.security).toEqual([]);
    expect(doc.paths['/api/v1/auth/accept'].post.security).toEqual([]);
    for (const [path, methods] of [
      ['/api/v1/members', ['get', 'post']],
      ['/api/v1/members/{id}', ['get', 'patch', 'delete']],
      ['/api/v1/auth/logout', ['post']],
      ['/api/v1/me', ['get']],
    ] as const)
      for (const method of methods) expect(doc.paths[path][method].description).toContain('or a session whose role has it');
  });
});
