import { simpleParser } from 'mailparser';
import { generate } from 'otplib';
import { AddressInfo } from 'net';
import { SMTPServer } from 'smtp-server';
import { API_KEY } from './support';
import { api } from './tenant-journey';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A real SMTP server on 127.0.0.1 (smtp-server) for the apps' SMTP_URL; every message parsed (mailparser). */
export class Mailbox {
  private constructor(
    private readonly server: SMTPServer,
    readonly url: string,
    readonly messages: Array<{ to: string; subject: string; text: string }>,
  ) {}

  static async start(): Promise<Mailbox> {
    const messages: Mailbox['messages'] = [];
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, _session, callback) {
        simpleParser(stream).then(
          (mail) => {
            const to = Array.isArray(mail.to) ? mail.to[0] : mail.to;
            messages.push({ to: to?.value[0]?.address ?? '', subject: mail.subject ?? '', text: mail.text ?? '' });
            callback();
          },
          (error: Error) => callback(error),
        );
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new Mailbox(server, `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`, messages);
  }

  /** The invitation token of the last message to `email`, read from the link in its text. */
  tokenFor(email: string): string {
    const message = [...this.messages].reverse().find((m) => m.to === email);
    const token = message?.text.match(/#token=(inv_[A-Za-z0-9_-]+)/)?.[1];
    if (!token) throw new Error(`no invitation mailed to ${email}: ${JSON.stringify(this.messages.map((m) => m.to))}`);
    return token;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A person signed in: the cookie as a browser would send it back, and the CSRF token of /me. */
export interface Person {
  readonly cookie: string;
  readonly csrf: string;
}

/** A call with a session cookie (and, when given, the CSRF token); no key. */
export async function asPerson(base: string, method: Method, path: string, person: Person, body?: unknown, csrf: string | null = person.csrf) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      cookie: person.cookie,
      ...(csrf ? { 'x-csrf-token': csrf } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies of many shapes, each checked by the assertions that read it
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, any>) : {}, headers: res.headers };
}

export async function signIn(base: string, email: string, password: string) {
  const res = await api(base, 'POST', '/api/v1/auth/login', null, { email, password });
  const setCookie = res.headers.get('set-cookie') ?? '';
  return { res, setCookie, person: { cookie: setCookie.split(';')[0], csrf: res.body.csrfToken as string } };
}

export const PASSWORD = 'correct horse battery';
/** Past the 1 s each instance trusts a checked session (as for keys). */
export const waitPastSessionCache = () => new Promise((r) => setTimeout(r, 1200));

/**
 * People on a profile, from outside: an operator creates a tenant with its first owner by email;
 * invitations arrive by mail (a real SMTP server) and are accepted; people sign in with a session
 * cookie and write with its CSRF token; a viewer is refused; a role change and a removal take
 * effect on the other instance within a second; failed sign-ins are throttled; the audit log names
 * the people. `bases` gives two generation instances (the same one twice on the embedded profile).
 * With `analytics`, the analytics API accepts the same sessions: signed in there or on the
 * generation app. The apps run with SIGN_IN_FAILURES_PER_ACCOUNT=3.
 */
export function describePeopleJourney(bases: () => readonly [string, string], mailbox: () => Mailbox, analytics?: () => string) {
  describe('people: members, invitations, sessions', () => {
    let tenantKey: string;
    let firstKey: { id: string; ownerId: string };
    let owner: Person;
    const a = () => bases()[0];
    const b = () => bases()[1];
    const ownerEmail = `owner-${Date.now()}@example.com`;
    const editorEmail = `editor-${Date.now()}@example.com`;
    const viewerEmail = `viewer-${Date.now()}@example.com`;

    it('lets an operator create a tenant with its first owner by email; the mailed invitation is accepted with a strong password', async () => {
      const created = await api(a(), 'POST', '/api/v1/admin/tenants', API_KEY, { name: 'People Inc', plan: 'paid', ownerEmail });
      expect(created.status).toBe(201);
      tenantKey = created.body.apiKey;
      firstKey = { id: created.body.key.id, ownerId: created.body.owner.member.id };
      expect(created.body.key.scopes).toContain('members:write');
      expect(created.body.owner).toMatchObject({ member: { email: ownerEmail, role: 'owner', status: 'invited' }, invitation: { mailed: true } });
      const token = mailbox().tokenFor(ownerEmail);
      expect(token).toBe(created.body.owner.invitation.token);
      expect(mailbox().messages.find((m) => m.to === ownerEmail)?.subject).toBe('You are invited to People Inc');
      const weak = await api(b(), 'POST', '/api/v1/auth/accept', null, { token, password: 'password1234' });
      expect(weak.status).toBe(400);
      expect(weak.body.code).toBe('PASSWORD_TOO_WEAK');
      const accepted = await api(b(), 'POST', '/api/v1/auth/accept', null, { token, password: PASSWORD });
      expect(accepted.status).toBe(200);
      expect(accepted.body.member).toMatchObject({ email: ownerEmail, status: 'active' });
      const again = await api(a(), 'POST', '/api/v1/auth/accept', null, { token, password: PASSWORD });
      expect(again.body.code).toBe('INVITATION_INVALID');
    });

    it('signs in with an HttpOnly, SameSite=Lax cookie; /me answers the person, the role and the CSRF token on the other instance', async () => {
      const { res, setCookie, person } = await signIn(a(), ownerEmail, PASSWORD);
      expect(res.status).toBe(200);
      expect(setCookie).toMatch(/^sl_session=ses_[A-Za-z0-9_-]+; Path=\/api; Max-Age=\d+; HttpOnly; SameSite=Lax$/); // no Secure over http
      owner = person;
      const me = await asPerson(b(), 'GET', '/api/v1/me', owner);
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ member: { email: ownerEmail }, role: 'owner', key: null, tenant: { name: 'People Inc' }, csrfToken: owner.csrf });
      expect(me.body.scopes).toEqual(expect.arrayContaining(['members:write', 'audit:read']));
      const byKey = await api(b(), 'GET', '/api/v1/me', tenantKey);
      expect(byKey.body).toMatchObject({ member: null, role: null, csrfToken: null, key: { name: 'first key' } });
      // The first key acts for no person: once the tenant has an owner, the owner adopts it to manage people with it.
      const adopted = await asPerson(a(), 'POST', `/api/v1/keys/${firstKey.id}/transfer`, owner, { memberId: firstKey.ownerId });
      expect(adopted.status).toBe(200);
      expect(adopted.body).toMatchObject({ actsFor: { email: ownerEmail, role: 'owner' }, status: 'active' });
      expect(adopted.body.activeScopes).toContain('members:write');
      await waitPastSessionCache(); // each instance trusts a checked key for a second, as it does a session
    });

    it('refuses a sign-in sent as a form (415) or by a page of another site (403 CROSS_SITE_REQUEST); the console’s own JSON signs in', async () => {
      const login = (base: string, contentType: string, body: string, headers: Record<string, string> = {}) =>
        fetch(`${base}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': contentType, ...headers }, body });
      const credentials = { email: ownerEmail, password: PASSWORD };
      const json = JSON.stringify(credentials);
      // What a page of another site can post without asking: a form, urlencoded or text/plain holding JSON.
      for (const base of [a(), ...(analytics ? [analytics()] : [])]) {
        for (const [type, body] of [
          ['application/x-www-form-urlencoded', new URLSearchParams(credentials).toString()],
          ['text/plain', json],
          ['multipart/form-data; boundary=x', `--x\r\nContent-Disposition: form-data; name="email"\r\n\r\n${ownerEmail}\r\n--x--\r\n`],
        ]) {
          const res = await login(base, type, body, { origin: 'http://attacker.example', 'sec-fetch-site': 'cross-site' });
          expect([type, res.status, res.headers.get('content-type')]).toEqual([type, 415, expect.stringContaining('application/problem+json')]);
          expect(((await res.json()) as { code: string }).code).toBe('UNSUPPORTED_MEDIA_TYPE');
          expect(res.headers.get('set-cookie')).toBeNull();
        }
        // JSON from another site's page (a browser would have asked CORS first; a listed origin alone may).
        const otherSites: Array<Record<string, string>> = [
          { origin: 'http://attacker.example', 'sec-fetch-site': 'cross-site' },
          { origin: 'null' },
          { 'sec-fetch-site': 'cross-site' },
        ];
        for (const headers of otherSites) {
          const res = await login(base, 'application/json', json, headers);
          expect([JSON.stringify(headers), res.status]).toEqual([JSON.stringify(headers), 403]);
          expect(((await res.json()) as { code: string }).code).toBe('CROSS_SITE_REQUEST');
          expect(res.headers.get('set-cookie')).toBeNull();
        }
        // The console (or the dashboard) served by this very app, as a browser sends its sign-in.
        const own = await login(base, 'application/json', json, { origin: new URL(base).origin, 'sec-fetch-site': 'same-origin' });
        expect(own.status).toBe(200);
        expect(own.headers.get('set-cookie')).toMatch(/^sl_session=ses_/);
      }
      // Every JSON route refuses a form body, with a key too; a write with the cookie and its token from another site's page is refused.
      const form = await fetch(`${a()}/api/v1/links`, {
        method: 'POST',
        headers: { 'x-api-key': tenantKey, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'url=https%3A%2F%2Fexample.com%2Fform',
      });
      expect(form.status).toBe(415);
      const person = (await signIn(b(), ownerEmail, PASSWORD)).person;
      const crossSite = await fetch(`${a()}/api/v1/links`, {
        method: 'POST',
        headers: { cookie: person.cookie, 'x-csrf-token': person.csrf, 'content-type': 'application/json', origin: 'http://attacker.example' },
        body: JSON.stringify({ url: 'https://example.com/cross-site' }),
      });
      expect(crossSite.status).toBe(403);
      expect(((await crossSite.json()) as { code: string }).code).toBe('CROSS_SITE_REQUEST');
      expect((await asPerson(a(), 'POST', '/api/v1/auth/logout', person)).status).toBe(204);
    });

    it('invites by the first key and by the owner; writes with a cookie need the CSRF token; a viewer is refused', async () => {
      const invitedByKey = await api(a(), 'POST', '/api/v1/members', tenantKey, { email: editorEmail, role: 'editor' });
      expect(invitedByKey.status).toBe(201);
      const withoutCsrf = await asPerson(a(), 'POST', '/api/v1/members', owner, { email: viewerEmail, role: 'viewer' }, null);
      expect(withoutCsrf.status).toBe(403);
      expect(withoutCsrf.body.code).toBe('CSRF_TOKEN_INVALID');
      const invitedByOwner = await asPerson(a(), 'POST', '/api/v1/members', owner, { email: viewerEmail, role: 'viewer' });
      expect(invitedByOwner.status).toBe(201);
      expect((await api(a(), 'POST', '/api/v1/members', tenantKey, { email: viewerEmail, role: 'viewer' })).body.code).toBe('MEMBER_EXISTS');
      for (const email of [editorEmail, viewerEmail])
        expect((await api(b(), 'POST', '/api/v1/auth/accept', null, { token: mailbox().tokenFor(email), password: PASSWORD })).status).toBe(200);

      const editor = (await signIn(b(), editorEmail, PASSWORD)).person;
      const noToken = await asPerson(a(), 'POST', '/api/v1/links', editor, { url: 'https://example.com/people/1' }, null);
      expect(noToken.status).toBe(403);
      expect(noToken.body.code).toBe('CSRF_TOKEN_INVALID');
      const made = await asPerson(a(), 'POST', '/api/v1/links', editor, { url: 'https://example.com/people/1' });
      expect(made.status).toBe(201);

      const viewer = (await signIn(a(), viewerEmail, PASSWORD)).person;
      const refused = await asPerson(b(), 'POST', '/api/v1/links', viewer, { url: 'https://example.com/people/2' });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', scope: 'links:write' });
      expect((await asPerson(b(), 'GET', '/api/v1/links?limit=5', viewer)).status).toBe(200);
      expect((await asPerson(b(), 'GET', '/api/v1/members', viewer)).status).toBe(403);

      const members = await asPerson(b(), 'GET', '/api/v1/members', owner);
      expect((members.body.members as Array<{ email: string }>).map((m) => m.email).sort()).toEqual([editorEmail, ownerEmail, viewerEmail].sort());
    });

    it('keeps the last owner; a role change and a removal take effect on the other instance within a second', async () => {
      const members = (await api(a(), 'GET', '/api/v1/members', tenantKey)).body.members as Array<{ id: string; email: string }>;
      const id = (email: string) => members.find((m) => m.email === email)!.id;
      const lastOwner = await api(a(), 'DELETE', `/api/v1/members/${id(ownerEmail)}`, tenantKey);
      expect(lastOwner.status).toBe(409);
      expect(lastOwner.body.code).toBe('LAST_OWNER');

      const editor = (await signIn(b(), editorEmail, PASSWORD)).person;
      expect((await asPerson(b(), 'POST', '/api/v1/links', editor, { url: 'https://example.com/people/3' })).status).toBe(201);
      const demoted = await asPerson(a(), 'PATCH', `/api/v1/members/${id(editorEmail)}`, owner, { role: 'viewer' });
      expect(demoted.status).toBe(200);
      expect(demoted.body.role).toBe('viewer');
      await waitPastSessionCache();
      expect((await asPerson(b(), 'POST', '/api/v1/links', editor, { url: 'https://example.com/people/4' })).status).toBe(403);

      expect((await asPerson(a(), 'DELETE', `/api/v1/members/${id(editorEmail)}`, owner)).status).toBe(204);
      await waitPastSessionCache();
      const gone = await asPerson(b(), 'GET', '/api/v1/me', editor);
      expect(gone.status).toBe(401);
      expect((await signIn(b(), editorEmail, PASSWORD)).res.status).toBe(401);
    });

    it('throttles failed sign-ins of an account with 429 and Retry-After; another account still signs in', async () => {
      for (let i = 0; i < 3; i++) expect((await signIn(i % 2 ? a() : b(), viewerEmail, 'not the password')).res.status).toBe(401);
      const throttled = (await signIn(a(), viewerEmail, PASSWORD)).res;
      expect(throttled.status).toBe(429);
      expect(throttled.body.code).toBe('RATE_LIMITED');
      expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(throttled.headers.get('retry-after'))).toBeLessThanOrEqual(300);
      expect((await signIn(b(), ownerEmail, PASSWORD)).res.status).toBe(200);
    });

    it('records sign-ins, failures, member changes and a person’s link in the audit log by email; sign-out ends the session', async () => {
      const log = await asPerson(b(), 'GET', '/api/v1/audit-log?limit=100', owner);
      expect(log.status).toBe(200);
      const entries = log.body.entries as Array<{ action: string; actor: { type: string; name: string } }>;
      const seen = (action: string, name: string) => entries.some((e) => e.action === action && e.actor.name === name);
      expect(seen('member.invited', 'first key')).toBe(true);
      expect(seen('member.joined', ownerEmail)).toBe(true);
      expect(seen('auth.signed_in', ownerEmail)).toBe(true);
      expect(seen('auth.sign_in_failed', viewerEmail)).toBe(true);
      expect(seen('member.role_changed', ownerEmail)).toBe(true);
      expect(seen('member.removed', ownerEmail)).toBe(true);
      expect(seen('link.created', editorEmail)).toBe(true);
      expect(entries.find((e) => e.actor.name === editorEmail && e.action === 'link.created')?.actor.type).toBe('person');
      expect(JSON.stringify(entries)).not.toContain(PASSWORD);

      const out = await asPerson(a(), 'POST', '/api/v1/auth/logout', owner);
      expect(out.status).toBe(204);
      expect(out.headers.get('set-cookie')).toMatch(/^sl_session=; Path=\/api; Max-Age=0; HttpOnly; SameSite=Lax/);
      await waitPastSessionCache();
      expect((await asPerson(b(), 'GET', '/api/v1/me', owner)).status).toBe(401);
    });

    it('answers bad input with problem+json and a stable code', async () => {
      const bad = await api(a(), 'POST', '/api/v1/members', tenantKey, { email: 'not-an-email', role: 'viewer' });
      expect(bad.status).toBe(400);
      expect(bad.headers.get('content-type')).toContain('application/problem+json');
      expect(bad.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'email' });
      expect((await api(a(), 'POST', '/api/v1/members', tenantKey, { email: 'x@example.com', role: 'emperor' })).body.code).toBe('VALIDATION_FAILED');
      expect((await api(a(), 'POST', '/api/v1/auth/login', null, { email: 'x@example.com' })).body.code).toBe('VALIDATION_FAILED');
      expect((await api(a(), 'GET', '/api/v1/members/no-such-member', tenantKey)).body.code).toBe('MEMBER_NOT_FOUND');
      expect((await api(a(), 'POST', '/api/v1/auth/accept', null, { token: 'inv_nope', password: PASSWORD })).body.code).toBe('INVITATION_INVALID');
    });
    it('turns on a TOTP second factor: sign-in then needs a code (each once) or a recovery code', async () => {
      const email = `totp-${Date.now()}@example.com`;
      const invited = await api(a(), 'POST', '/api/v1/members', tenantKey, { email, role: 'editor' });
      expect((await api(b(), 'POST', '/api/v1/auth/accept', null, { token: invited.body.invitation.token, password: PASSWORD })).status).toBe(200);
      const person = (await signIn(a(), email, PASSWORD)).person;
      const state = async () => (await asPerson(b(), 'GET', '/api/v1/me/second-factor', person)).body;
      expect(await state()).toEqual({ enabled: false, pending: false });
      const begun = await asPerson(a(), 'POST', '/api/v1/me/second-factor', person);
      expect(begun.status).toBe(200);
      expect(await state()).toEqual({ enabled: false, pending: true });
      const secret = begun.body.secret as string;
      expect(begun.body.uri).toContain(`secret=${secret}`);
      const codeAt = (offsetSeconds: number) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSeconds });
      expect((await asPerson(b(), 'POST', '/api/v1/me/second-factor/confirm', person, { code: '000000' })).body.code).toBe('SECOND_FACTOR_INVALID');
      const confirmed = await asPerson(b(), 'POST', '/api/v1/me/second-factor/confirm', person, { code: await codeAt(0) });
      expect(confirmed.status).toBe(200);
      const recoveryCodes = confirmed.body.recoveryCodes as string[];
      expect(recoveryCodes).toHaveLength(10);
      expect(await state()).toEqual({ enabled: true, pending: false });

      const without = await api(a(), 'POST', '/api/v1/auth/login', null, { email, password: PASSWORD });
      expect(without.status).toBe(401);
      expect(without.body.code).toBe('SECOND_FACTOR_REQUIRED');
      const ahead = await codeAt(30); // the next step (one step of drift is accepted): not the one the confirmation used
      expect((await api(b(), 'POST', '/api/v1/auth/login', null, { email, password: PASSWORD, code: ahead })).status).toBe(200);
      expect((await api(a(), 'POST', '/api/v1/auth/login', null, { email, password: PASSWORD, code: ahead })).status).toBe(401); // replayed, other instance
      const recovered = await api(a(), 'POST', '/api/v1/auth/login', null, { email, password: PASSWORD, recoveryCode: recoveryCodes[0] });
      expect(recovered.status).toBe(200);
      expect((await api(b(), 'POST', '/api/v1/auth/login', null, { email, password: PASSWORD, recoveryCode: recoveryCodes[0] })).status).toBe(401);
      expect((await asPerson(a(), 'POST', '/api/v1/me/second-factor/disable', person, { recoveryCode: recoveryCodes[1] })).status).toBe(204);
      expect(await state()).toEqual({ enabled: false, pending: false });
      expect((await api(a(), 'GET', '/api/v1/me/second-factor', tenantKey)).status).toBe(403);
      expect((await api(b(), 'POST', '/api/v1/auth/login', null, { email, password: PASSWORD })).status).toBe(200);
      expect((await api(a(), 'POST', '/api/v1/me/second-factor', tenantKey)).status).toBe(403); // a key has none
    });
    it('moves or turns off a second factor only with it; wrong codes count with failed sign-ins (429 with Retry-After)', async () => {
      const email = `totp-move-${Date.now()}@example.com`;
      const invited = await api(a(), 'POST', '/api/v1/members', tenantKey, { email, role: 'viewer' });
      expect((await api(b(), 'POST', '/api/v1/auth/accept', null, { token: invited.body.invitation.token, password: PASSWORD })).status).toBe(200);
      const person = (await signIn(a(), email, PASSWORD)).person;
      const state = async () => (await asPerson(b(), 'GET', '/api/v1/me/second-factor', person)).body;
      const first = (await asPerson(a(), 'POST', '/api/v1/me/second-factor', person)).body.secret as string;
      const confirmed = await asPerson(b(), 'POST', '/api/v1/me/second-factor/confirm', person, {
        code: await generate({ secret: first, epoch: Math.floor(Date.now() / 1000) }),
      });
      const recoveryCodes = confirmed.body.recoveryCodes as string[];
      expect(await state()).toEqual({ enabled: true, pending: false });

      // The session alone (a stolen cookie, an unlocked laptop) cannot put another authenticator in place.
      const bare = await asPerson(a(), 'POST', '/api/v1/me/second-factor', person);
      expect(bare.status).toBe(401);
      expect(bare.body.code).toBe('SECOND_FACTOR_REQUIRED');
      expect(await state()).toEqual({ enabled: true, pending: false });
      // With a recovery code (or a current code) it moves; the new secret is confirmed on the other instance.
      const moved = await asPerson(a(), 'POST', '/api/v1/me/second-factor', person, { recoveryCode: recoveryCodes[0] });
      expect(moved.status).toBe(200);
      expect(await state()).toEqual({ enabled: true, pending: true });
      const second = moved.body.secret as string;
      const done = await asPerson(b(), 'POST', '/api/v1/me/second-factor/confirm', person, {
        code: await generate({ secret: second, epoch: Math.floor(Date.now() / 1000) }),
      });
      expect(done.status).toBe(200);
      const fresh = done.body.recoveryCodes as string[];
      expect((await api(a(), 'POST', '/api/v1/auth/login', null, { email, password: PASSWORD, recoveryCode: fresh[0] })).status).toBe(200);
      // Failure 1 of the account (SIGN_IN_FAILURES_PER_ACCOUNT=3): a recovery code of the authenticator moved away.
      expect((await api(b(), 'POST', '/api/v1/auth/login', null, { email, password: PASSWORD, recoveryCode: recoveryCodes[1] })).status).toBe(401);
      // Failures 2 and 3: wrong codes to turn it off, on both instances.
      const wrongCode = await asPerson(a(), 'POST', '/api/v1/me/second-factor/disable', person, { code: '000000' });
      expect([wrongCode.status, wrongCode.body.code]).toEqual([400, 'SECOND_FACTOR_INVALID']);
      const wrongRecovery = await asPerson(b(), 'POST', '/api/v1/me/second-factor/disable', person, { recoveryCode: 'zzzzz-zzzzz' });
      expect([wrongRecovery.status, wrongRecovery.body.code]).toEqual([400, 'SECOND_FACTOR_INVALID']);
      // Past the limit: even a right recovery code is refused (not spent), and so is a sign-in of the account.
      const throttled = await asPerson(a(), 'POST', '/api/v1/me/second-factor/disable', person, { recoveryCode: fresh[1] });
      expect([throttled.status, throttled.body.code]).toEqual([429, 'RATE_LIMITED']);
      expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(throttled.headers.get('retry-after'))).toBeLessThanOrEqual(300);
      expect((await asPerson(b(), 'POST', '/api/v1/me/second-factor', person, { recoveryCode: fresh[1] })).status).toBe(429);
      expect((await api(b(), 'POST', '/api/v1/auth/login', null, { email, password: PASSWORD, recoveryCode: fresh[1] })).status).toBe(429);
      expect(await state()).toEqual({ enabled: true, pending: false });
    });

    it('changes a password (the other sessions end on both instances, this one stays); lists the sessions and ends one', async () => {
      const email = `pw-${Date.now()}@example.com`;
      const invited = await api(a(), 'POST', '/api/v1/members', tenantKey, { email, role: 'viewer' });
      // Accepting signs in: that session is one of the others the change ends.
      const accepted = await api(b(), 'POST', '/api/v1/auth/accept', null, { token: invited.body.invitation.token, password: PASSWORD });
      expect(accepted.status).toBe(200);
      const onAcceptance = { cookie: (accepted.headers.get('set-cookie') ?? '').split(';')[0], csrf: accepted.body.csrfToken as string };
      expect((await asPerson(a(), 'GET', '/api/v1/me', onAcceptance)).status).toBe(200);
      const here = (await signIn(a(), email, PASSWORD)).person;
      const there = (await signIn(b(), email, PASSWORD)).person;
      const wrong = await asPerson(a(), 'POST', '/api/v1/me/password', here, { currentPassword: 'not it at all', newPassword: 'a brand new passphrase' });
      expect(wrong.status).toBe(403);
      expect(wrong.body.code).toBe('PASSWORD_INCORRECT');
      const changed = await asPerson(a(), 'POST', '/api/v1/me/password', here, { currentPassword: PASSWORD, newPassword: 'a brand new passphrase' });
      expect(changed.status).toBe(200);
      expect(changed.body.sessionsEnded).toBe(2);
      await waitPastSessionCache();
      expect((await asPerson(b(), 'GET', '/api/v1/me', there)).status).toBe(401);
      expect((await asPerson(a(), 'GET', '/api/v1/me', onAcceptance)).status).toBe(401);
      expect((await asPerson(b(), 'GET', '/api/v1/me', here)).status).toBe(200);
      const third = (await signIn(a(), email, 'a brand new passphrase')).person;
      // The person lists their sessions and ends another one (the third) from the first.
      const listed = await asPerson(b(), 'GET', '/api/v1/me/sessions', here);
      expect(listed.status).toBe(200);
      const sessions = listed.body.sessions as Array<{ id: string; current: boolean }>;
      expect(sessions).toHaveLength(2);
      expect(sessions.filter((x) => x.current)).toHaveLength(1);
      const other = sessions.find((x) => !x.current)!;
      expect((await asPerson(a(), 'DELETE', `/api/v1/me/sessions/${other.id}`, here)).status).toBe(204);
      expect((await asPerson(a(), 'DELETE', `/api/v1/me/sessions/${other.id}`, here)).body.code).toBe('SESSION_NOT_FOUND');
      await waitPastSessionCache();
      expect((await asPerson(b(), 'GET', '/api/v1/me', third)).status).toBe(401);
      expect((await asPerson(b(), 'GET', '/api/v1/me', here)).status).toBe(200);
    });
    if (analytics)
      it('signs in on the analytics app too: its API takes the session (a viewer reads analytics), writes need the CSRF token', async () => {
        const email = `analyst-${Date.now()}@example.com`;
        const invited = await api(a(), 'POST', '/api/v1/members', tenantKey, { email, role: 'viewer' });
        expect((await api(a(), 'POST', '/api/v1/auth/accept', null, { token: invited.body.invitation.token, password: PASSWORD })).status).toBe(200);
        const wrong = await signIn(analytics(), email, 'not the password');
        expect(wrong.res.status).toBe(401);
        const { res, setCookie, person } = await signIn(analytics(), email, PASSWORD);
        expect(res.status).toBe(200);
        expect(setCookie).toMatch(/^sl_session=ses_[A-Za-z0-9_-]+; Path=\/api; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
        expect(res.body).toMatchObject({ member: { email }, role: 'viewer', tenant: { name: 'People Inc' } });
        const orphans = await asPerson(analytics(), 'GET', '/api/v1/stats/orphans', person);
        expect(orphans.status).toBe(200);
        expect(orphans.body.totals).toBeDefined();
        // The same session on the generation app, and one opened there on the analytics app.
        expect((await asPerson(a(), 'GET', '/api/v1/me', person)).body).toMatchObject({ member: { email }, csrfToken: person.csrf });
        const other = (await signIn(b(), email, PASSWORD)).person;
        expect((await asPerson(analytics(), 'GET', '/api/v1/me', other)).body).toMatchObject({ member: { email }, role: 'viewer' });
        expect((await asPerson(analytics(), 'GET', '/api/v1/stats/top-links', other)).status).toBe(200);
        // A write with the cookie needs the token; with it, sign-out ends the session on every app within a second.
        const noToken = await asPerson(analytics(), 'POST', '/api/v1/auth/logout', person, undefined, null);
        expect(noToken.status).toBe(403);
        expect(noToken.body.code).toBe('CSRF_TOKEN_INVALID');
        expect((await asPerson(analytics(), 'POST', '/api/v1/auth/logout', person)).status).toBe(204);
        await waitPastSessionCache();
        expect((await asPerson(a(), 'GET', '/api/v1/me', person)).status).toBe(401);
        expect((await asPerson(analytics(), 'GET', '/api/v1/stats/orphans', person)).status).toBe(401);
        expect((await asPerson(analytics(), 'GET', '/api/v1/stats/orphans', other)).status).toBe(200);
      });
  });
}
