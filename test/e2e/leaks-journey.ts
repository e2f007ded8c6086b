import { eventually, sleep } from '@shortlink/harness';
import { API_KEY, BROWSER_UA, createLink, createTenant, RealStackApps } from './support';
import { SseClient } from './stream-journey';
import { api } from './tenant-journey';

/** Longer than two merges of the redirect instances' visitor counts (REDIRECT_COUNTER_SYNC_MS, 100 ms by default) and their round trips. */
const COUNTS_MERGED_MS = 300;

/** What a leaks journey runs on: the apps, and the redirect instances visitors reach (one on the embedded profile, two on the real stack). */
export interface LeaksTarget {
  readonly endpoints: RealStackApps['endpoints'];
  readonly redirects: readonly string[];
}

/** The processes of a leaks journey run with these, besides their profile's own. */
export const LEAKS_SETTINGS = {
  // Loopback is the trusted proxy: X-Forwarded-For names the visitor.
  TRUSTED_PROXIES: '127.0.0.1/32,::1/128',
  QR_SCANS_PER_VISITOR_PER_MINUTE: '3',
  SHORTLINK_DOMAINS: 'leaks.sho.test',
  CLICK_BUFFER_FLUSH_MS: '50',
} as const;

type Link = { code: string; domain: string };
type SourceItem = { value: string | null; clicks: number };

/**
 * What one tenant could learn of others, or inflate, through the smaller leaks an outside probe
 * found (docs/design.md, "Security model"), on either profile: live-stream event ids that counted
 * every tenant's clicks, one visitor id on two tenants' links, QR scans by a script counted as
 * scans, a name under a service domain given to a tenant. The processes run with LEAKS_SETTINGS.
 */
export function describeLeaksJourney(target: () => LeaksTarget) {
  describe('smaller leaks between tenants', () => {
    const run = Date.now().toString(36);
    let n = 0;
    /** A visitor address no other visit of the journey uses (TEST-NET-2). */
    const visitor = () => `198.51.100.${++n}`;
    const link = async (apiKey: string, path: string): Promise<Link> => {
      const res = await createLink(target().endpoints, { url: `https://example.com/leaks/${path}?run=${run}` }, apiKey);
      expect(res.status).toBe(201);
      return { code: res.body.code as string, domain: res.body.domain as string };
    };
    /** A visit on the i-th redirect instance (round robin), as a browser from `address` sends it. */
    const visit = async (path: string, address: string, i = 0, userAgent = BROWSER_UA) => {
      const redirects = target().redirects;
      const res = await fetch(`${redirects[i % redirects.length]}/${path}`, {
        redirect: 'manual',
        headers: { 'user-agent': userAgent, 'x-forwarded-for': address },
      });
      await res.body?.cancel();
      return res.status;
    };
    const analytics = async <T>(path: string, apiKey: string): Promise<T> => {
      const res = await api(target().endpoints.analytics, 'GET', path, apiKey);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      return res.body as T;
    };
    const streams: SseClient[] = [];
    const stream = async (apiKey: string, headers: Record<string, string> = {}) => {
      const s = await SseClient.open(`${target().endpoints.analytics}/api/v1/events/stream`, { 'x-api-key': apiKey, ...headers });
      streams.push(s);
      expect(s.status).toBe(200);
      return s;
    };
    const seqOf = (id: string) => Number(id.slice(id.indexOf('.') + 1));

    afterEach(async () => {
      await Promise.all(streams.splice(0).map((s) => s.close()));
    });

    it("numbers each tenant's live clicks on its own: another tenant's clicks move no id, and Last-Event-ID still resumes", async () => {
      const a = await createTenant(target().endpoints);
      const b = await createTenant(target().endpoints);
      const [mine, theirs] = [await link(a.apiKey, 'stream-a'), await link(b.apiKey, 'stream-b')];
      const ours = await stream(a.apiKey);
      const others = await stream(b.apiKey);
      // The instance's live consumer starts at the end of the topic once it joined: B clicks until it reads.
      await eventually(
        "the stream to carry B's clicks",
        async () => {
          await visit(theirs.code, visitor());
          await sleep(300);
          return others.clicks().length > 0;
        },
        60_000,
        0,
      );
      const warmed = others.clicks().length;
      for (let i = 0; i < 5; i++) await visit(theirs.code, visitor(), i);
      await visit(mine.code, visitor());
      for (let i = 0; i < 3; i++) await visit(theirs.code, visitor(), i);
      await visit(mine.code, visitor(), 1);
      const [first, second] = await ours.waitForClicks(2);
      expect([first.code, second.code]).toEqual([mine.code, mine.code]);
      // A's ids are 1 and 2 of this instance: nothing of B's dozen clicks shows in them.
      expect([seqOf(first.id), seqOf(second.id)]).toEqual([1, 2]);
      const bIds = (await others.waitForClicks(warmed + 8)).map((c) => seqOf(c.id));
      expect(bIds).toEqual(bIds.map((_, i) => bIds[0] + i));

      await ours.close();
      await visit(mine.code, visitor());
      await visit(theirs.code, visitor());
      await visit(mine.code, visitor(), 1);
      await others.waitForClicks(bIds.length + 1);
      const resumed = await stream(a.apiKey, { 'last-event-id': first.id });
      const replayed = await resumed.waitForClicks(3);
      expect(replayed.map((c) => seqOf(c.id))).toEqual([2, 3, 4]);
      expect(resumed.events.some((e) => e.event === 'gap')).toBe(false);
    }, 120_000);

    it("gives one visitor unrelated visitor ids on two tenants' links, and one id on one tenant's links", async () => {
      const a = await createTenant(target().endpoints);
      const b = await createTenant(target().endpoints);
      const [a1, a2, b1] = [await link(a.apiKey, 'visitor-a1'), await link(a.apiKey, 'visitor-a2'), await link(b.apiKey, 'visitor-b1')];
      const same = visitor();
      for (const [l, i] of [
        [a1, 0],
        [a2, 1],
        [b1, 0],
      ] as const)
        expect(await visit(l.code, same, i)).toBe(302);
      const visitorOf = (l: Link, apiKey: string) =>
        eventually(`the visit of ${l.code}`, async () => {
          const page = await analytics<{ visits: Array<{ visitor: string }> }>(`/api/v1/links/${l.code}/visits`, apiKey);
          return page.visits[0]?.visitor;
        });
      const [ofA1, ofA2, ofB1] = [await visitorOf(a1, a.apiKey), await visitorOf(a2, a.apiKey), await visitorOf(b1, b.apiKey)];
      expect(ofA2).toBe(ofA1);
      expect(ofB1).not.toBe(ofA1);
    }, 60_000);

    it('counts a few scans of a link per visitor and minute over every instance; a script fetching the QR URL gets its redirects, not scans', async () => {
      const { apiKey } = await createTenant(target().endpoints);
      const poster = await link(apiKey, 'poster');
      // The scans of one visitor fall in one minute: the window is a calendar minute, shared by the instances.
      if (new Date().getSeconds() > 45) await sleep((61 - new Date().getSeconds()) * 1000);
      const script = visitor();
      const statuses = [];
      // Paced past a merge of the instances' counts, alternating between the two instances: by the
      // stated bound (docs/design.md, "Per-link visitor limit") the script's scans pass the limit of
      // 3 by at most one per instance; a burst could get up to 2 × 3 before the instances merge.
      for (let i = 0; i < 12; i++) {
        statuses.push(await visit(`${poster.code}/~`, script, i));
        await sleep(COUNTS_MERGED_MS);
      }
      expect(statuses).toEqual(Array(12).fill(302));
      expect(await visit(`${poster.code}/~`, visitor(), 1)).toBe(302); // a person with a phone
      expect(await visit(`${poster.code}/~`, visitor(), 0, 'curl/8.5.0')).toBe(302); // a bot: counted as one, left out by default
      const sources = (bots: string) =>
        analytics<{ items: SourceItem[] }>(`/api/v1/links/${poster.code}/breakdown/sources?bots=${bots}`, apiKey).then((b) =>
          Object.fromEntries(b.items.map((i) => [i.value, i.clicks])),
        );
      const all = await eventually('every visit in the sources breakdown', async () => {
        const s = await sources('include');
        return (s.qr ?? 0) + (s.link ?? 0) === 14 ? s : null;
      });
      const scriptScans = all.qr - 2; // the phone's scan and the bot's are counted too
      expect(scriptScans).toBeGreaterThanOrEqual(3);
      expect(scriptScans).toBeLessThanOrEqual(3 + 2);
      expect(all).toEqual({ qr: scriptScans + 2, link: 12 - scriptScans });
      expect(await sources('exclude')).toEqual({ qr: scriptScans + 1, link: 12 - scriptScans });
    }, 90_000);

    it("refuses to give a tenant a name under one of the service's domains (409 DOMAIN_TAKEN)", async () => {
      const { tenantId } = await createTenant(target().endpoints);
      const add = (domain: string) => api(target().endpoints.generation, 'POST', `/api/v1/admin/tenants/${tenantId}/domains`, API_KEY, { domain });
      for (const domain of ['x.leaks.sho.test', 'A.B.Leaks.Sho.Test', 'leaks.sho.test']) {
        const refused = await add(domain);
        expect({ domain, status: refused.status, body: refused.body }).toEqual({
          domain,
          status: 409,
          body: expect.objectContaining({ code: 'DOMAIN_TAKEN', serviceDomain: 'leaks.sho.test' }),
        });
      }
      expect((await add(`go-${run}.leaks-sho.test`)).status).toBe(201);
    });
  });
}
