import { randomUUID } from 'crypto';
import { Endpoints } from '@shortlink/harness';
import { LINK_PREVIEWER_AGENTS } from '@shortlink/visitors-domain';
import { API_KEY, createLink, propagated } from './support';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const PIXEL = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';
const WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

/**
 * Every link option and page over HTTP (docs/design.md, "Link options", "Pages"), shared by both
 * profiles. The profile trusts X-Forwarded-For from 127.0.0.1 (TRUSTED_PROXIES), so a test is a
 * visitor of its choice: its own address (no limit shared with other tests) or one of a country.
 */
export function describeLinkOptions(endpoints: () => Endpoints) {
  /** The operator's ban, through the admin API (the bootstrap key has the admin scope). */
  const ban = async (domain: string, code: string) => {
    const res = await fetch(`${endpoints().generation}/api/v1/admin/links/${code}/moderation?domain=${encodeURIComponent(domain)}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
      body: JSON.stringify({ moderation: 'banned', reason: 'e2e: phishing' }),
    });
    if (res.status !== 200) throw new Error(`banning ${domain}/${code} answered ${res.status}: ${await res.text()}`);
  };
  let n = 0;
  /** A visitor address no other request of the run uses (TEST-NET-2, not in the geo database). */
  const visitor = () => `198.51.100.${++n % 250}`;
  const create = async (body: object) => {
    const created = await createLink(endpoints(), { url: 'https://example.com/options', ...body });
    if (created.status !== 201) throw new Error(`create answered ${created.status} ${JSON.stringify(created.body)}`);
    return created.body as { code: string; domain: string; version: number };
  };
  const visit = (code: string, init: { method?: string; headers?: Record<string, string>; body?: string; path?: string } = {}) =>
    fetch(`${endpoints().redirect}/${code}${init.path ?? ''}`, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      body: init.body,
      headers: { 'x-forwarded-for': visitor(), ...init.headers },
    });
  const submit = (code: string, password: string, headers: Record<string, string> = {}, path = '') =>
    visit(code, {
      method: 'POST',
      path,
      body: new URLSearchParams({ password }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    });
  /** A PATCH that must succeed; then the propagation bound, after which every visit must see it (docs/design.md, "Edits reach every instance"). */
  const edit = async (code: string, body: object) => {
    const res = await fetch(`${endpoints().generation}/api/v1/links/${code}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
      body: JSON.stringify(body),
    });
    const answeredAt = Date.now();
    expect({ status: res.status, body: res.status === 200 ? null : await res.text() }).toEqual({ status: 200, body: null });
    await propagated(answeredAt);
  };
  const expectPage = (res: Response) => {
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toMatch(
      /^default-src 'none'; style-src 'sha256-[^']+'; img-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'/,
    );
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  };

  describe('link options at the redirect', () => {
    it('maxClicks: HEAD does not count, the GETs beyond the limit get 410 LINK_EXHAUSTED', async () => {
      const { code } = await create({ maxClicks: 3 });
      const statuses: number[] = [];
      for (let i = 0; i < 2; i++) statuses.push((await visit(code, { method: 'HEAD' })).status);
      for (let i = 0; i < 5; i++) statuses.push((await visit(code)).status);
      expect(statuses).toEqual([302, 302, 302, 302, 302, 410, 410]);
      const gone = await visit(code);
      expect(gone.headers.get('content-type')).toContain('application/problem+json');
      expect(await gone.json()).toMatchObject({ status: 410, code: 'LINK_EXHAUSTED' });
    });

    it('maxClicks: raising the limit with PATCH gives the link more clicks, on every visit from the propagation bound on', async () => {
      const { code } = await create({ maxClicks: 1 });
      expect((await visit(code)).status).toBe(302);
      expect((await visit(code)).status).toBe(410);
      await edit(code, { maxClicks: 3 });
      expect([(await visit(code)).status, (await visit(code)).status, (await visit(code)).status]).toEqual([302, 302, 410]);
    });

    it('password: a form that does not reveal the target; the right password redirects (303), wrong ones are limited per visitor', async () => {
      const { code } = await create({ url: 'https://example.com/members-only', password: 'correct horse' });
      const form = await visit(code, { headers: { accept: 'text/html' } });
      expect(form.status).toBe(200);
      expectPage(form);
      const html = await form.text();
      expect(html).toContain('type="password"');
      expect(html).not.toContain('members-only');

      const me = { 'x-forwarded-for': visitor() };
      for (let i = 0; i < 5; i++) {
        const wrong = await submit(code, `guess ${i}`, me);
        expect(wrong.status).toBe(403);
        expect(await wrong.json()).toMatchObject({ code: 'PASSWORD_INCORRECT' });
      }
      const limited = await submit(code, 'correct horse', me);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);

      const ok = await submit(code, 'correct horse', {}, '?from=e2e');
      expect(ok.status).toBe(303);
      expect(ok.headers.get('location')).toBe('https://example.com/members-only?from=e2e');
    });

    it('password: a right password is remembered in a signed cookie of the link, and a changed password ends it', async () => {
      const { code } = await create({ url: 'https://example.com/remembered', password: 'correct horse', passwordRememberHours: 6 });
      const ok = await submit(code, 'correct horse', { 'x-forwarded-proto': 'https' });
      expect(ok.status).toBe(303);
      const setCookie = ok.headers.get('set-cookie')!;
      // Named by a keyed hash of the short URL, not by the link's id (a counter over every tenant's links).
      expect(setCookie).toMatch(new RegExp(`^sl_pw_[A-Za-z0-9_-]{22}=\\d+\\.[A-Za-z0-9_-]{43}; Path=/${code}; Max-Age=21600; HttpOnly; SameSite=Lax; Secure$`));
      expect(setCookie).not.toMatch(/^sl_pw_\d+=/);
      const cookie = setCookie.split(';')[0];
      // Plain http through the proxy: not Secure.
      expect((await submit(code, 'correct horse')).headers.get('set-cookie')).toMatch(/; HttpOnly; SameSite=Lax$/);

      const remembered = await visit(code, { headers: { cookie, accept: 'text/html' }, path: '?from=e2e' });
      expect(remembered.status).toBe(302);
      expect(remembered.headers.get('location')).toBe('https://example.com/remembered?from=e2e');
      expect(remembered.headers.get('cache-control')).toBe('private, no-store');
      expect((await visit(code, { headers: { accept: 'text/html' } })).status).toBe(200); // no cookie: the form

      await edit(code, { password: 'battery staple' });
      const ended = await visit(code, { headers: { cookie, accept: 'text/html' } });
      expect(ended.status).toBe(200);
      expect(await ended.text()).toContain('type="password"');
      const renewed = await submit(code, 'battery staple');
      expect(renewed.status).toBe(303);
      expect((await visit(code, { headers: { cookie: renewed.headers.get('set-cookie')!.split(';')[0] } })).status).toBe(302);
    });

    it('social: each unfurling bot gets the Open Graph / Twitter card, people the redirect; without social, bots the redirect', async () => {
      const social = { title: 'Spring "sale" <50%>', description: 'Half price & more', image: 'https://cdn.example.com/spring.png' };
      const { code } = await create({ url: 'https://example.com/spring', social });
      const read = await fetch(`${endpoints().generation}/api/v1/links/${code}`, { headers: { 'x-api-key': API_KEY } });
      expect(((await read.json()) as { social: unknown }).social).toEqual(social);
      for (const [name, agent] of Object.entries(LINK_PREVIEWER_AGENTS)) {
        const card = await visit(code, { headers: { 'user-agent': agent } });
        expect({ name, status: card.status, type: card.headers.get('content-type') }).toEqual({ name, status: 200, type: 'text/html; charset=utf-8' });
        expect(card.headers.get('content-security-policy')).toBe("default-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'");
        const html = await card.text();
        expect(html).toContain('<meta property="og:title" content="Spring &quot;sale&quot; &lt;50%&gt;">');
        expect(html).toContain('<meta property="og:description" content="Half price &amp; more">');
        expect(html).toContain('<meta property="og:image" content="https://cdn.example.com/spring.png">');
        expect(html).toContain('<meta name="twitter:card" content="summary_large_image">');
        expect(html).toContain('<meta http-equiv="refresh" content="0;url=https://example.com/spring">');
        expect(html).not.toMatch(/<script/i);
      }
      const person = await visit(code, { headers: { 'user-agent': WINDOWS } });
      expect(person.status).toBe(302);
      expect(person.headers.get('location')).toBe('https://example.com/spring');

      await edit(code, { social: null });
      const slack = await visit(code, { headers: { 'user-agent': LINK_PREVIEWER_AGENTS.Slackbot } });
      expect(slack.status).toBe(302);

      // The image passes the URL policy like every target; the title is required.
      const badImage = await createLink(endpoints(), { url: 'https://example.com/a', social: { title: 't', image: 'javascript:alert(1)' } });
      expect(badImage.status).toBe(400);
      expect(JSON.stringify(badImage.body)).toContain('social.image');
      const noTitle = await createLink(endpoints(), { url: 'https://example.com/a', social: { description: 'd' } });
      expect(noTitle.status).toBe(400);
    });

    it('appTargets: an app URL scheme in a page for a browser on that device, a universal link as the redirect, the fallback for everyone else', async () => {
      const html = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
      const appTargets = { ios: 'myapp://product/42?ref=e2e', android: 'https://example.com/app/42' };
      const created = await create({ url: 'https://example.com/web/42', deviceTargets: { ios: 'https://apps.apple.com/app/id42' }, appTargets });
      const { code } = created;
      const api = (path: string, init: RequestInit = {}) =>
        fetch(`${endpoints().generation}/api/v1/links${path}`, {
          ...init,
          headers: { 'content-type': 'application/json', 'x-api-key': API_KEY, ...init.headers },
        });
      const read = await api(`/${code}`);
      expect(((await read.json()) as { appTargets: unknown }).appTargets).toEqual(appTargets);
      const listed = (await (await api('?limit=100')).json()) as { links: Array<{ code: string; appTargets: unknown }> };
      expect(listed.links.find((l) => l.code === code)?.appTargets).toEqual(appTargets);

      const iphone = await visit(code, { headers: { 'user-agent': IPHONE, accept: html } });
      expect(iphone.status).toBe(200);
      expectPage(iphone);
      const page = await iphone.text();
      expect(page).toContain('href="myapp://product/42?ref=e2e"');
      expect(page).toContain('<meta http-equiv="refresh" content="5;url=https://apps.apple.com/app/id42">');
      expect(page).toContain('href="https://apps.apple.com/app/id42"');
      expect(page).not.toMatch(/<script/i);
      const answer = async (headers: Record<string, string>) => {
        const res = await visit(code, { headers });
        return [res.status, res.headers.get('location')];
      };
      expect(await answer({ 'user-agent': IPHONE })).toEqual([302, 'https://apps.apple.com/app/id42']); // no text/html: the fallback
      expect(await answer({ 'user-agent': PIXEL, accept: html })).toEqual([302, 'https://example.com/app/42']);
      expect(await answer({ 'user-agent': WINDOWS, accept: html })).toEqual([302, 'https://example.com/web/42']);

      // PATCH with If-Match: Android now gets a scheme too, with the link's target as its fallback.
      const patched = await api(`/${code}`, {
        method: 'PATCH',
        headers: { 'if-match': `"${created.version}"` },
        body: JSON.stringify({ appTargets: { ios: null, android: 'myapp://product/42' } }),
      });
      const answeredAt = Date.now();
      expect(patched.status).toBe(200);
      expect(((await patched.json()) as { appTargets: unknown }).appTargets).toEqual({ android: 'myapp://product/42' });
      await propagated(answeredAt);
      const android = await visit(code, { headers: { 'user-agent': PIXEL, accept: html } });
      expect(android.status).toBe(200);
      expect(await android.text()).toContain('<meta http-equiv="refresh" content="5;url=https://example.com/web/42">');
      expect(await answer({ 'user-agent': IPHONE, accept: html })).toEqual([302, 'https://apps.apple.com/app/id42']);

      // A scheme that runs code is refused with a stable code; an https app link passes the URL policy; a custom scheme is no target.
      for (const bad of ['javascript:alert(1)', 'data:text/html,x', 'file:///etc/passwd', 'vbscript:x', 'blob:https://example.com/x', 'about:blank']) {
        const refused = await createLink(endpoints(), { url: 'https://example.com/a', appTargets: { ios: bad } });
        expect({ bad, status: refused.status, code: refused.body.code }).toEqual({ bad, status: 400, code: 'URL_NOT_ALLOWED' });
        expect(JSON.stringify(refused.body)).toContain('dangerous-scheme');
      }
      expect((await createLink(endpoints(), { url: 'https://example.com/a', appTargets: { android: 'https://localhost/app' } })).body.code).toBe(
        'URL_NOT_ALLOWED',
      );
      expect((await createLink(endpoints(), { url: 'myapp://product/42' })).status).toBe(400);
    });

    it('per-link visitor limit: clicksPerIpPerMinute redirects per address, then 429 with Retry-After', async () => {
      const { code } = await create({ clicksPerIpPerMinute: 2 });
      const me = { 'x-forwarded-for': visitor() };
      const statuses = [(await visit(code, { headers: me })).status, (await visit(code, { headers: me })).status];
      const limited = await visit(code, { headers: me });
      expect([...statuses, limited.status]).toEqual([302, 302, 429]);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await visit(code)).status).toBe(302);
    });

    it('geo, then device targets, then sticky weighted variants; country from a trusted X-Forwarded-For', async () => {
      const { code } = await create({
        url: 'https://example.com/default',
        geoTargets: { GB: 'https://example.co.uk/', DE: 'https://example.de/' },
        deviceTargets: { ios: 'https://example.com/ios', android: 'https://example.com/android' },
        variants: [
          { url: 'https://example.com/a', weight: 1 },
          { url: 'https://example.com/b', weight: 1 },
        ],
      });
      const to = async (ip: string, ua = WINDOWS) => (await visit(code, { headers: { 'x-forwarded-for': ip, 'user-agent': ua } })).headers.get('location');
      expect(await to('81.2.69.142', IPHONE)).toBe('https://example.co.uk/');
      expect(await to('5.9.0.1')).toBe('https://example.de/');
      expect(await to('8.8.8.8', IPHONE)).toBe('https://example.com/ios');
      expect(await to('8.8.8.8', PIXEL)).toBe('https://example.com/android');
      const seen = new Set<string | null>();
      for (let i = 1; i <= 30; i++) {
        const first = await to(`203.0.113.${i}`);
        expect(await to(`203.0.113.${i}`)).toBe(first);
        seen.add(first);
      }
      expect([...seen].sort()).toEqual(['https://example.com/a', 'https://example.com/b']);
    });

    it("UTM parameters join the target's query (UTM wins a clash), the visitor's query follows unless forwardQuery is false", async () => {
      const utm = await create({ url: 'https://example.com/landing?utm_source=old&lang=en', utm: { source: 'newsletter', campaign: 'spring sale' } });
      const res = await visit(utm.code, { path: '?x=1&lang=de&q=a%20b' });
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe('https://example.com/landing?lang=en&utm_source=newsletter&utm_campaign=spring%20sale&x=1&q=a%20b');
      const closed = await create({ url: 'https://example.com/closed', forwardQuery: false });
      expect((await visit(closed.code, { path: '?x=1' })).headers.get('location')).toBe('https://example.com/closed');
    });

    it('a flagged link shows a warning page with a continue link; following it redirects', async () => {
      const created = await createLink(endpoints(), { url: 'https://paypal.com.secure-login.example/verify' });
      expect(created.status).toBe(201);
      expect(created.body.moderation).toMatchObject({ state: 'flagged' });
      const code = created.body.code as string;
      const warning = await visit(code, { path: '?x=1' });
      expect(warning.status).toBe(200);
      expectPage(warning);
      const html = await warning.text();
      expect(html).toContain(`href="/${code}/go?x=1"`);
      const go = await visit(code, { path: '/go?x=1' });
      expect(go.status).toBe(302);
      expect(go.headers.get('location')).toBe('https://paypal.com.secure-login.example/verify?x=1');
    });

    it('a banned link shows a blocked page (451), its preview too', async () => {
      const { code, domain } = await create({ url: 'https://example.com/banned-target' });
      await ban(domain, code);
      for (const path of ['', '/go', '+']) {
        const res = await visit(code, { path });
        expect(res.status).toBe(451);
        expectPage(res);
        expect(await res.text()).not.toContain('banned-target');
      }
    });

    it('the preview page /{code}+ shows target, title and creation date, escaped', async () => {
      const { code } = await create({ url: 'https://example.com/previewed?a=1&b=2', title: 'Spring <sale> & more' });
      const res = await visit(code, { path: '+' });
      expect(res.status).toBe(200);
      expectPage(res);
      const html = await res.text();
      expect(html).toContain('https://example.com/previewed?a=1&amp;b=2');
      expect(html).toContain('Spring &lt;sale&gt; &amp; more');
      expect(html).toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/);
      expect(html).not.toMatch(/<script/i);
    });

    it('an edit, a disable and a delete reach the redirect: new target, then 404 LINK_NOT_FOUND for the disabled link as for the deleted one', async () => {
      const { code } = await create({ url: 'https://example.com/before' });
      for (let i = 0; i < 3; i++) expect((await visit(code)).headers.get('location')).toBe('https://example.com/before'); // cached in L1
      await edit(code, { url: 'https://example.com/after' });
      expect((await visit(code)).headers.get('location')).toBe('https://example.com/after');
      await edit(code, { status: 'disabled' });
      // Exactly what a code that never existed gets (the code itself swapped): a visitor cannot tell a disabled link exists.
      const answer = async (c: string) => {
        const res = await visit(c);
        const body = (await res.text()).replaceAll(c, 'CODE');
        return { status: res.status, type: res.headers.get('content-type'), length: res.headers.get('content-length'), body };
      };
      const disabled = await answer(code);
      expect(JSON.parse(disabled.body)).toMatchObject({ status: 404, code: 'LINK_NOT_FOUND' });
      expect(disabled).toEqual(
        await answer(
          `x${randomUUID()
            .replace(/-/g, '')
            .slice(0, code.length - 1)}`,
        ),
      );
      const removed = await fetch(`${endpoints().generation}/api/v1/links/${code}`, { method: 'DELETE', headers: { 'x-api-key': API_KEY } });
      const removedAt = Date.now();
      expect(removed.status).toBe(204);
      await propagated(removedAt);
      expect(await (await visit(code)).json()).toMatchObject({ status: 404, code: 'LINK_NOT_FOUND' });
    });
  });
}
