import { randomUUID } from 'crypto';
import { request } from 'http';
import { Endpoints, eventually, postLater } from '@shortlink/harness';
import { API_KEY, createLink, createTenant, redirectOf } from './support';

/** A visit as a browser on `host` makes it (fetch cannot set Host; node:http can). */
function visitOn(redirect: string, path: string, host: string, headers: Record<string, string> = {}): Promise<{ status: number; location?: string }> {
  const { hostname, port } = new URL(redirect);
  return new Promise((resolve, reject) => {
    request({ host: hostname, port, path, headers: { host, ...headers } }, (res) => {
      res.resume().on('end', () => resolve({ status: res.statusCode!, location: res.headers.location }));
    })
      .on('error', reject)
      .end();
  });
}

const tally = (statuses: number[]) => statuses.reduce<Record<number, number>>((n, s) => ({ ...n, [s]: (n[s] ?? 0) + 1 }), {});

/**
 * What an outside prober tried against the redirect and the APIs, on either profile with
 * the default limits: password guesses in flight, one client starving other tenants' password links,
 * Host variants, and what one tenant could learn of another's deleted links. The processes trust
 * loopback as a proxy (TRUSTED_PROXIES), so X-Forwarded-For names the visitor.
 */
export function describeProbeJourney(endpoints: () => Endpoints) {
  const run = Date.now().toString(36);
  let n = 0;
  /** A visitor address no other request of the run uses (TEST-NET-3). */
  const visitor = () => `203.0.113.${200 + (++n % 50)}`;
  const api = async (base: string, method: string, path: string, key: string, body?: unknown) => {
    const headers = { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) };
    const res = await fetch(`${base}${path}`, { method, headers, body: body ? JSON.stringify(body) : undefined });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  const created = async (body: object, key: string) => {
    const res = await createLink(endpoints(), body, key);
    if (res.status !== 201) throw new Error(`create answered ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { code: string; domain: string };
  };
  const post = (code: string, password: string, from: string) =>
    fetch(`${endpoints().redirect}/${code}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ password }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': from },
    });
  /** The operator gives a new tenant a domain of its own; resolves once the redirect serves it. */
  const tenantWithDomain = async () => {
    const tenant = await createTenant(endpoints());
    const domain = `go-${randomUUID().slice(0, 8)}.acme.test`;
    expect((await api(endpoints().generation, 'POST', `/api/v1/admin/tenants/${tenant.tenantId}/domains`, API_KEY, { domain })).status).toBe(201);
    const probe = await created({ url: 'https://example.com/served', domain }, tenant.apiKey);
    // The redirect reads tenant domains every second: until then the host is the default domain's.
    const served = async () => (await visitOn(endpoints().redirect, `/${probe.code}`, domain, { 'x-forwarded-for': visitor() })).status === 302;
    await eventually(`${domain} served`, served, 5000);
    return { ...tenant, domain };
  };

  describe('an outside probe', () => {
    it('evaluates at most 5 wrong passwords of 300 connections that send their headers first and their bodies one at a time', async () => {
      const { code } = await created({ url: 'https://example.com/guarded', password: 'correct horse battery' }, API_KEY);
      const me = { 'x-forwarded-for': visitor() };
      const posts = Array.from({ length: 300 }, (_, i) => postLater(endpoints().redirect, `/${code}`, `password=guess-${i}`, me));
      await new Promise((r) => setTimeout(r, 500)); // every request is past its headers before the first body leaves
      const answers: Array<{ status: number; body: string }> = [];
      for (const p of posts) answers.push(await p.send());
      expect(tally(answers.map((a) => a.status))).toEqual({ 403: 5, 429: 295 });
      expect(JSON.parse(answers[299].body)).toMatchObject({ code: 'RATE_LIMITED' });
      expect((await post(code, 'correct horse battery', me['x-forwarded-for'])).status).toBe(429); // the guesses used the budget up
      expect((await post(code, 'correct horse battery', visitor())).status).toBe(303);
    });

    it("does not let one client looping over its own links' right passwords make another tenant's visitor fail", async () => {
      const attackerKey = (await createTenant(endpoints())).apiKey;
      const victimKey = (await createTenant(endpoints())).apiKey;
      const own = await Promise.all([0, 1, 2, 3].map((i) => created({ url: `https://example.com/own-${i}`, password: 'my own secret' }, attackerKey)));
      const theirs = await created({ url: 'https://example.com/theirs', password: 'their secret' }, victimKey);
      const attacker = visitor();
      const victim = visitor();
      let running = true;
      const started = Date.now();
      const attackerStatuses: number[] = [];
      const loops = Array.from({ length: 8 }, async (_, i) => {
        while (running) attackerStatuses.push((await post(own[i % own.length].code, 'my own secret', attacker)).status);
      });
      const victimStatuses: number[] = [];
      try {
        for (let i = 0; i < 12; i++) victimStatuses.push((await post(theirs.code, 'their secret', victim)).status);
      } finally {
        running = false;
        await Promise.all(loops);
      }
      expect(victimStatuses).toEqual(Array(12).fill(303));
      // Right passwords spend from the visitor's budget (REDIRECT_PASSWORD_CHECKS_PER_VISITOR_PER_MINUTE, 30) as wrong ones do:
      // 30 per window of a clock minute, so a run that crosses a minute's end (or that a loaded machine stretches) has more.
      const windows = Math.floor(Date.now() / 60_000) - Math.floor(started / 60_000) + 1;
      expect(tally(attackerStatuses)[303] ?? 0).toBeLessThanOrEqual(30 * windows);
      expect(tally(attackerStatuses)[429]).toBeGreaterThan(0);
    });

    it("resolves Host variants of a tenant's domain (trailing dot, :80, :443, case) on it, never on another tenant's default-domain link", async () => {
      const a = await tenantWithDomain();
      const b = await createTenant(endpoints());
      const alias = `same1-${run}`;
      await created({ url: 'https://example.com/tenant-a', alias, domain: a.domain }, a.apiKey);
      await created({ url: 'https://example.com/tenant-b', alias }, b.apiKey);
      expect((await visitOn(endpoints().redirect, `/${alias}`, a.domain)).location).toBe('https://example.com/tenant-a');
      for (const host of [`${a.domain}.`, `${a.domain}:80`, `${a.domain}:443`, `${a.domain.toUpperCase()}.:443`]) {
        const { location } = await visitOn(endpoints().redirect, `/${alias}`, host);
        expect({ host, location }).toEqual({ host, location: 'https://example.com/tenant-a' });
      }
      expect((await redirectOf(endpoints(), alias)).headers.get('location')).toBe('https://example.com/tenant-b');
    });

    it("does not show another tenant's deleted code among a tenant's orphan visits; the operator sees it, the tenant sees its own domain's", async () => {
      const a = await tenantWithDomain();
      const b = await createTenant(endpoints());
      const from = Math.floor(Date.now() / 1000) - 120;
      // A has clicks on the shared default domain, and a typo on its own domain.
      const mine = await created({ url: 'https://example.com/a-on-default' }, a.apiKey);
      expect((await redirectOf(endpoints(), mine.code, { 'x-forwarded-for': visitor() })).status).toBe(302);
      const typo = `a-typo-${run}`;
      expect((await visitOn(endpoints().redirect, `/${typo}`, a.domain, { 'x-forwarded-for': visitor() })).status).toBe(404);
      // B deletes a link on the default domain, whose code is still visited.
      const secret = `b-q3-layoffs-${run}`;
      await created({ url: 'https://example.com/q3', alias: secret }, b.apiKey);
      expect((await api(endpoints().generation, 'DELETE', `/api/v1/links/${secret}`, b.apiKey)).status).toBe(204);
      for (let i = 0; i < 2; i++) expect((await redirectOf(endpoints(), secret, { 'x-forwarded-for': visitor() })).status).toBe(404);
      type Orphans = { codes: Array<{ domain: string; code: string; visits: number }> };
      const orphans = async (key: string) => (await api(endpoints().analytics, 'GET', `/api/v1/stats/orphans?from=${from}&limit=1000`, key)).body as Orphans;
      await eventually("the operator sees B's deleted code", async () => (await orphans(API_KEY)).codes.some((c) => c.code === secret), 60_000, 250);
      await eventually(
        "A's own orphan and A's click",
        async () => {
          const stats = await api(endpoints().analytics, 'GET', `/api/v1/links/${mine.code}/stats?from=${from}`, a.apiKey);
          const clicks = stats.body as { totals?: { clicks: number } };
          return clicks.totals?.clicks === 1 && (await orphans(a.apiKey)).codes.some((c) => c.code === typo);
        },
        60_000,
        250,
      );
      const seenByA = await orphans(a.apiKey);
      expect(seenByA.codes).toEqual([{ domain: a.domain, code: typo, visits: 1 }]);
      expect((await orphans(b.apiKey)).codes).toEqual([]);
    });

    it('tells another tenant only that a deleted alias is unavailable, as for a live one: no date, nothing about the deletion', async () => {
      const b = await createTenant(endpoints());
      const a = await createTenant(endpoints());
      const [deleted, live] = [`b-gone-${run}`, `b-live-${run}`];
      await created({ url: 'https://example.com/gone', alias: deleted }, b.apiKey);
      await created({ url: 'https://example.com/live', alias: live }, b.apiKey);
      expect((await api(endpoints().generation, 'DELETE', `/api/v1/links/${deleted}`, b.apiKey)).status).toBe(204);
      const refusal = async (alias: string) => {
        const res = await createLink(endpoints(), { url: 'https://example.com/mine', alias }, a.apiKey);
        return { status: res.status, body: JSON.stringify(res.body).replaceAll(alias, 'ALIAS') };
      };
      const asLive = await refusal(live);
      expect(asLive.status).toBe(409);
      expect(JSON.parse(asLive.body)).toMatchObject({ code: 'ALIAS_TAKEN' });
      expect(await refusal(deleted)).toEqual(asLive);
    });
  });
}
