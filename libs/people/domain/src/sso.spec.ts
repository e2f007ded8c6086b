import { createHash } from 'crypto';
import { AuditEntry, AuditLog } from '@shortlink/audit-domain';
import { InMemoryAuditLogStore } from '@shortlink/audit-domain/testing';
import { DomainError } from '@shortlink/core';
import { ListCursors } from '@shortlink/links-domain';
import { UrlPolicy } from '@shortlink/url-policy';
import { LocalRateWindows, Tenant } from '@shortlink/tenants-domain';
import { Member } from './member';
import { SecretBox } from './second-factor';
import { SignedIn } from './session-service';
import { NewSsoMember, OidcClient, OidcError, OidcIdentity, SsoService, SsoSettings, SsoStore } from './sso';
import { SsoAddresses } from './sso-addresses';

const tenant: Tenant = { id: 't1', name: 'Acme', plan: 'free', status: 'active', createdAt: new Date(0) };
const context = { actor: { type: 'key' as const, id: 'k1', name: 'first key' }, clientAddress: '192.0.2.1' };
const CALLBACK = 'https://links.example/api/v1/auth/sso/callback';
const SECRET = 'the client secret';

/** The store's behaviour as the contract suite pins it (sso-store.contract.ts), in memory. */
class MemoryStore implements SsoStore {
  readonly settings = new Map<string, SsoSettings>();
  readonly members: Member[] = [];
  readonly audit: AuditEntry[] = [];
  async get(id: string) {
    return this.settings.get(id) ?? null;
  }
  async put(s: SsoSettings, audit: AuditEntry) {
    this.settings.set(s.tenantId, s);
    this.audit.push(audit);
  }
  async delete(id: string, audit: AuditEntry) {
    if (!this.settings.delete(id)) return false;
    this.audit.push(audit);
    return true;
  }
  async memberForSignIn(m: NewSsoMember, audit: (m: Member) => AuditEntry) {
    const found = this.members.find((x) => x.tenantId === m.tenantId && x.email === m.email);
    if (found) return { member: found, created: false };
    const member: Member = { ...m, status: 'active', invitationExpiresAt: null };
    this.members.push(member);
    this.audit.push(audit(member));
    return { member, created: true };
  }
}

/** A provider as the client sees it: what the authorization URL carried, and the identity it vouches for at the exchange. */
class FakeProvider implements OidcClient {
  identity: OidcIdentity = { subject: 'sub-1', email: 'Ana@Example.com', emailVerified: true };
  failure: OidcError | Error | null = null;
  readonly asked: Array<{ state: string; nonce: string; codeChallenge: string; secret: string }> = [];
  readonly exchanged: Array<{ codeVerifier: string; nonce: string; secret: string }> = [];
  async authorizationUrl(p: { clientSecret: string }, r: { state: string; nonce: string; codeChallenge: string }) {
    if (this.failure) throw this.failure;
    this.asked.push({ ...r, secret: p.clientSecret });
    return `https://idp.example/authorize?state=${r.state}`;
  }
  async exchange(p: { clientSecret: string }, r: { codeVerifier: string; nonce: string }) {
    if (this.failure) throw this.failure;
    this.exchanged.push({ ...r, secret: p.clientSecret });
    return this.identity;
  }
}

/** What the DNS answers in these tests; any other name is a public address. */
const HOSTS: Record<string, string[]> = {
  'intranet.example.com': ['127.0.0.1'],
  'rebound.example.com': ['93.184.215.14', '::ffff:0:7f00:1'],
  'metadata.example.com': ['64:ff9b::a9fe:a9fe'],
  'gone.example.com': [],
};
const TIMEOUT_MS = 2000;

function setup(starts = { perTenant: 100, perAddress: 100 }) {
  const now = { t: Date.UTC(2026, 0, 1) };
  const waits: number[] = [];
  const resolver = { addresses: async (host: string) => HOSTS[host] ?? ['93.184.215.14'] };
  const store = new MemoryStore();
  const provider = new FakeProvider();
  const opened: Array<{ member: Member; method: string }> = [];
  const sessions = {
    openSession: async (member: Member, t: Tenant, _address: string | null, method: 'password' | 'oidc') => {
      opened.push({ member, method });
      return { token: 'ses_x', member, tenant: t } as unknown as SignedIn;
    },
  };
  const audit = new AuditLog(new InMemoryAuditLogStore(), { cursors: ListCursors.ephemeral(), retentionMs: 1e9 });
  const sso = new SsoService(
    {
      store,
      oidc: provider,
      box: new SecretBox('a code secret of 32 bytes or more!!', 'sso v1'),
      sessions,
      tenants: { getTenant: async () => tenant },
      audit,
    },
    {
      callbackUrl: CALLBACK,
      addresses: new SsoAddresses(resolver, new UrlPolicy({ shortDomains: ['sho.rt'] }), { allowInsecure: false }),
      providerTimeoutMs: TIMEOUT_MS,
      starts: { windows: new LocalRateWindows({ now: () => now.t }), ...starts },
      // Waiting is a step of the clock here: what the service waited is recorded.
      wait: async (ms) => {
        waits.push(ms);
        now.t += ms;
      },
      clock: { now: () => now.t },
    },
  );
  const configure = () =>
    sso.configure(
      't1',
      { issuer: 'https://idp.example/', clientId: 'c1', clientSecret: SECRET, allowedDomains: ['Example.com'], defaultRole: 'editor' },
      context,
    );
  const callbackFor = (state: string, code = 'the-code') => new URL(`${CALLBACK}?code=${code}&state=${state}`);
  return { now, waits, store, provider, opened, sso, configure, callbackFor };
}

const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (error) {
    return (error as DomainError).code;
  }
  return 'no error';
};

describe('SsoService', () => {
  it('stores the settings with the secret sealed (never in the clear, never answered) and a change without a secret keeps it', async () => {
    const { sso, store, configure } = setup();
    const view = await configure();
    expect(view).toMatchObject({
      issuer: 'https://idp.example',
      clientId: 'c1',
      clientSecretSet: true,
      allowedDomains: ['example.com'],
      defaultRole: 'editor',
    });
    expect(JSON.stringify(view)).not.toContain(SECRET);
    const stored = store.settings.get('t1')!;
    expect(stored.sealedSecret).toMatch(/^v1\./);
    expect(JSON.stringify(stored)).not.toContain(SECRET);
    await sso.configure('t1', { issuer: 'https://idp.example', clientId: 'c2', allowedDomains: ['example.com'] }, context);
    expect(store.settings.get('t1')!.sealedSecret).toBe(stored.sealedSecret);
    expect(store.audit.map((e) => [e.action, JSON.stringify(e).includes(SECRET)])).toEqual([
      ['sso.settings_changed', false],
      ['sso.settings_changed', false],
    ]);
  });

  it('refuses bad settings with VALIDATION_FAILED: http issuers (unless allowed), no domain, an owner role, no first secret', async () => {
    const { sso } = setup();
    const good = { issuer: 'https://idp.example', clientId: 'c1', clientSecret: 's', allowedDomains: ['example.com'] };
    for (const bad of [
      { issuer: 'http://idp.example' },
      { issuer: 'https://u:p@idp.example' },
      { allowedDomains: [] },
      { allowedDomains: ['not a domain'] },
      { defaultRole: 'owner' },
      { clientSecret: undefined },
      { clientId: '' },
    ])
      expect(await codeOf(sso.configure('t1', { ...good, ...bad }, context))).toBe('VALIDATION_FAILED');
    expect(await codeOf(sso.get('t1'))).toBe('SSO_NOT_CONFIGURED');
    expect(await codeOf(sso.start('t1'))).toBe('SSO_NOT_CONFIGURED');
  });

  it('starts with PKCE (S256 of the verifier), state and nonce, all fresh, and finishes with the same verifier and nonce; a new person gets the configured role', async () => {
    const { sso, provider, opened, store, configure, callbackFor } = setup();
    await configure();
    const one = await sso.start('t1');
    const two = await sso.start('t1');
    expect(one.pending).not.toBe(two.pending);
    const [a, b] = provider.asked;
    expect(a.state).not.toBe(b.state);
    expect(a.nonce).not.toBe(b.nonce);
    expect(a.secret).toBe(SECRET);
    await sso.finish(callbackFor(a.state), one.pending, '192.0.2.7');
    const [exchange] = provider.exchanged;
    expect(createHash('sha256').update(exchange.codeVerifier).digest('base64url')).toBe(a.codeChallenge);
    expect(exchange.nonce).toBe(a.nonce);
    expect(opened).toEqual([{ member: expect.objectContaining({ email: 'ana@example.com', role: 'editor', status: 'active' }), method: 'oidc' }]);
    expect(store.audit.map((e) => e.action)).toContain('member.joined');
  });

  it('refuses a wrong state, another start’s cookie, a forged or expired cookie with SSO_STATE_MISMATCH, before asking the provider', async () => {
    const { sso, provider, now, configure, callbackFor } = setup();
    await configure();
    const one = await sso.start('t1');
    const two = await sso.start('t1');
    const state = provider.asked[0].state;
    expect(await codeOf(sso.finish(callbackFor('x'.repeat(43)), one.pending, null))).toBe('SSO_STATE_MISMATCH');
    expect(await codeOf(sso.finish(callbackFor(state), two.pending, null))).toBe('SSO_STATE_MISMATCH');
    expect(await codeOf(sso.finish(callbackFor(state), undefined, null))).toBe('SSO_STATE_MISMATCH');
    expect(await codeOf(sso.finish(callbackFor(state), `${one.pending.slice(0, -2)}AA`, null))).toBe('SSO_STATE_MISMATCH');
    now.t += 600_001;
    expect(await codeOf(sso.finish(callbackFor(state), one.pending, null))).toBe('SSO_STATE_MISMATCH');
    expect(provider.exchanged).toEqual([]);
  });

  it('refuses an email of another domain, an unverified one or none with SSO_EMAIL_DOMAIN_REFUSED, and opens no session', async () => {
    const { sso, provider, opened, store, configure, callbackFor } = setup();
    await configure();
    for (const identity of [
      { subject: 's', email: 'eve@elsewhere.test', emailVerified: true },
      { subject: 's', email: 'ana@sub.example.com', emailVerified: true },
      { subject: 's', email: 'ana@example.com', emailVerified: false },
      { subject: 's', email: null, emailVerified: null },
    ]) {
      provider.identity = identity;
      const started = await sso.start('t1');
      expect(await codeOf(sso.finish(callbackFor(provider.asked.at(-1)!.state), started.pending, null))).toBe('SSO_EMAIL_DOMAIN_REFUSED');
    }
    expect(opened).toEqual([]);
    expect(store.members).toEqual([]);
  });

  it('maps the provider’s failures: a refused code is SSO_CODE_REJECTED, no answer is SSO_PROVIDER_UNAVAILABLE', async () => {
    const { sso, provider, configure, callbackFor } = setup();
    await configure();
    const started = await sso.start('t1');
    const state = provider.asked[0].state;
    provider.failure = new OidcError('rejected', 'invalid_grant');
    expect(await codeOf(sso.finish(callbackFor(state), started.pending, null))).toBe('SSO_CODE_REJECTED');
    provider.failure = new OidcError('unavailable', 'fetch failed');
    expect(await codeOf(sso.finish(callbackFor(state), started.pending, null))).toBe('SSO_PROVIDER_UNAVAILABLE');
    expect(await codeOf(sso.start('t1'))).toBe('SSO_PROVIDER_UNAVAILABLE');
    provider.failure = null;
    expect(await codeOf(sso.finish(new URL(`${CALLBACK}?error=access_denied&state=${state}`), started.pending, null))).toBe('SSO_CODE_REJECTED');
  });

  it('refuses issuers at internal addresses (URL_NOT_ALLOWED): literals in any spelling, local names, names that resolve inside', async () => {
    const { sso, store } = setup();
    const good = { clientId: 'c1', clientSecret: 's', allowedDomains: ['example.com'] };
    const refusals: Array<[string, string]> = [];
    for (const issuer of [
      'https://127.0.0.1:8443',
      'https://localhost',
      'https://localhost.:8443',
      'https://[::1]',
      'https://169.254.169.254',
      'https://10.0.0.1',
      'https://[::7f00:1]',
      'https://[::ffff:0:7f00:1]',
      'https://2130706433', // 127.0.0.1 as one number
      'https://idp.internal',
      'https://sso.sho.rt', // this platform's own domain
      'https://intranet.example.com', // resolves to 127.0.0.1
      'https://rebound.example.com', // one public address and one inside
      'https://metadata.example.com', // NAT64 of 169.254.169.254
      'https://gone.example.com', // resolves to nothing
    ]) {
      try {
        await sso.configure('t1', { ...good, issuer }, context);
        refusals.push([issuer, 'accepted']);
      } catch (error) {
        const e = error as DomainError;
        refusals.push([issuer, `${e.code} ${String(e.details.reason)} ${String(e.details.field)}`]);
      }
    }
    for (const [issuer, verdict] of refusals) expect([issuer, verdict]).toEqual([issuer, expect.stringMatching(/^URL_NOT_ALLOWED \S+ issuer$/)]);
    expect(Object.fromEntries(refusals)['https://intranet.example.com']).toBe('URL_NOT_ALLOWED private-address issuer');
    expect(Object.fromEntries(refusals)['https://gone.example.com']).toBe('URL_NOT_ALLOWED unresolvable issuer');
    expect(store.settings.size).toBe(0);
    // http stays refused without SSO_ALLOW_INSECURE_ISSUERS.
    expect(await codeOf(sso.configure('t1', { ...good, issuer: 'http://idp.example.com' }, context))).toBe('VALIDATION_FAILED');
  });

  it('answers every failure to reach the provider alike: one code, one text, once SSO_TIMEOUT_SECONDS have passed since the call began', async () => {
    const { sso, provider, now, waits, configure } = setup();
    await configure();
    const answers: string[] = [];
    for (const [failure, tookMs] of [
      [new OidcError('unavailable', 'connect ECONNREFUSED 203.0.113.9:443'), 5], // a closed port
      [new OidcError('unavailable', 'the provider did not answer within 2000 ms'), TIMEOUT_MS], // a silent one
      [new OidcError('unavailable', 'the token_endpoint of https://idp.example is not an address single sign-on may reach'), 40],
      [new OidcError('rejected', 'unexpected JSON'), 700], // something that answers, but not a provider
      [new Error('socket hang up'), 300],
    ] as const) {
      provider.failure = failure;
      const slow = provider.authorizationUrl.bind(provider);
      provider.authorizationUrl = async (...args) => {
        now.t += tookMs;
        return slow(...args);
      };
      const began = now.t;
      try {
        await sso.start('t1', '192.0.2.9');
        answers.push('started');
      } catch (error) {
        const e = error as DomainError;
        answers.push(JSON.stringify({ code: e.code, message: e.message, details: e.details }));
      }
      expect(now.t - began).toBe(TIMEOUT_MS);
      provider.authorizationUrl = slow;
    }
    expect(new Set(answers).size).toBe(1);
    expect(JSON.parse(answers[0])).toEqual({
      code: 'SSO_PROVIDER_UNAVAILABLE',
      message: 'the sign-in provider could not be reached; try again later',
      details: { retryAfterSeconds: 5 },
    });
    expect(waits).toEqual([TIMEOUT_MS - 5, TIMEOUT_MS - 40, TIMEOUT_MS - 700, TIMEOUT_MS - 300]);
  });

  it('caps starts per client address and per tenant (429 RATE_LIMITED with Retry-After), before the provider is asked', async () => {
    const { sso, provider, now, configure } = setup({ perTenant: 3, perAddress: 2 });
    await configure();
    await sso.start('t1', '192.0.2.1');
    await sso.start('t1', '192.0.2.1');
    const capped = sso.start('t1', '192.0.2.1');
    await expect(capped).rejects.toMatchObject({ code: 'RATE_LIMITED', details: { retryAfterSeconds: expect.any(Number) } });
    await sso.start('t1', '192.0.2.2');
    await expect(sso.start('t1', '192.0.2.3')).rejects.toMatchObject({ code: 'RATE_LIMITED' }); // the tenant's third
    expect(provider.asked).toHaveLength(3);
    now.t += 60_000;
    await sso.start('t1', '192.0.2.1');
    expect(provider.asked).toHaveLength(4);
  });
});
