import { Endpoints, eventually, parseMetrics } from '@shortlink/harness';
import { createLink, redirectOf } from './support';
import { api } from './tenant-journey';

/** One Server-Sent Event as a client reads it. */
export interface SseEvent {
  readonly id?: string;
  readonly event: string;
  readonly data: string;
}

/**
 * A Server-Sent Events client as a customer writes one with fetch (an EventSource cannot send the
 * x-api-key header): reads the body as it comes and splits it into events and comments.
 */
export class SseClient {
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  private readonly abort = new AbortController();
  private done: Promise<void> = Promise.resolve();

  private constructor(readonly response: Response) {}

  /** Opens the stream; the response is kept whatever its status (an error is read with `problem`). */
  static async open(url: string, headers: Record<string, string>): Promise<SseClient> {
    const abort = new AbortController();
    const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
    const client = new SseClient(res);
    Object.assign(client, { abort });
    if (res.ok && res.body) client.done = client.read(res.body);
    return client;
  }

  get status(): number {
    return this.response.status;
  }

  clicks(): Array<Record<string, unknown> & { id: string; code: string }> {
    return this.of('click');
  }

  /** The data of the events of one type (`click`, `lead`, `sale`), parsed. */
  of(type: string): Array<Record<string, unknown> & { id: string; code: string }> {
    return this.events.filter((e) => e.event === type).map((e) => JSON.parse(e.data));
  }

  /** Waits until `count` click events arrived; returns them all. */
  waitForClicks(count: number, timeoutMs = 30_000) {
    return eventually(`${count} click events`, async () => (this.clicks().length >= count ? this.clicks() : null), timeoutMs, 50);
  }

  async problem(): Promise<{ status: number; code: string; type: string | null }> {
    const body = (await this.response.json()) as { code: string };
    return { status: this.status, code: body.code, type: this.response.headers.get('content-type') };
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.done.catch(() => undefined);
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          this.parse(block);
        }
      }
    } catch {
      // aborted by close()
    }
  }

  private parse(block: string): void {
    let id: string | undefined;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
      else if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length > 0) this.events.push({ id, event, data: data.join('\n') });
  }
}

/**
 * The live click stream over HTTP, on either profile: a tenant opens
 * GET /api/v1/events/stream, a visitor clicks through the redirect app, the click arrives; filters by
 * code, tag and domain; a resume with Last-Event-ID (complete, expired, of another instance); the
 * per-tenant limit and a malformed id; a lead and a sale posted through the track API arrive as
 * `lead` and `sale` events. The processes run with ANALYTICS_STREAM_REPLAY_EVENTS=5 and
 * ANALYTICS_STREAM_MAX_PER_TENANT=4.
 */
export function describeStreamJourney(endpoints: () => Endpoints, newTenant: () => Promise<{ apiKey: string }>) {
  describe('live click stream', () => {
    let key: string;
    let other: string;
    let a: { code: string; domain: string };
    let b: { code: string; domain: string };
    const open = (query = '', headers: Record<string, string> = {}, apiKey = key) =>
      SseClient.open(`${endpoints().analytics}/api/v1/events/stream${query}`, { 'x-api-key': apiKey, ...headers });
    const click = async (link: { code: string }) => expect((await redirectOf(endpoints(), link.code)).status).toBe(302);
    const streams: SseClient[] = [];
    const opened = async (query = '', headers: Record<string, string> = {}, apiKey = key) => {
      // A stream closed just before frees its slot when the server sees the connection go: within moments.
      const s = await eventually(
        'a stream slot',
        async () => {
          const s = await open(query, headers, apiKey);
          if (s.status !== 429) return s;
          await s.response.body?.cancel();
          return null;
        },
        5000,
        50,
      );
      streams.push(s);
      expect(s.status).toBe(200);
      return s;
    };

    beforeAll(async () => {
      ({ apiKey: key } = await newTenant());
      ({ apiKey: other } = await newTenant());
      const make = async (tag: string) => {
        const res = await createLink(endpoints(), { url: `https://example.com/live/${tag}?t=${Date.now()}`, tags: [tag] }, key);
        expect(res.status).toBe(201);
        return { code: res.body.code as string, domain: res.body.domain as string };
      };
      a = await make('live-a');
      b = await make('live-b');
      // The instance's consumer starts at the end of the topic once it joined: click until it is reading.
      const warm = await opened();
      await eventually(
        'the stream to carry a click',
        async () => {
          await click(a);
          await new Promise((r) => setTimeout(r, 300));
          return warm.clicks().length > 0;
        },
        60_000,
        0,
      );
      await warm.close();
    }, 90_000);

    afterEach(async () => {
      await Promise.all(streams.splice(0).map((s) => s.close()));
    });

    it('answers text/event-stream and carries a click through the redirect as it happens, never the IP address', async () => {
      const s = await opened();
      expect(s.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(s.response.headers.get('cache-control')).toContain('no-cache');
      await click(a);
      const [c] = await s.waitForClicks(1);
      expect(c).toMatchObject({ code: a.code, domain: a.domain, source: 'link', bot: false, device: 'desktop', browser: 'Chrome' });
      expect(c.id).toMatch(/^[a-z0-9]+\.\d+$/);
      expect(s.events.find((e) => e.event === 'click')!.id).toBe(c.id);
      expect(Date.now() - Date.parse(c.time as string)).toBeLessThan(30_000);
      expect(JSON.stringify(c)).not.toMatch(/127\.0\.0\.1|::1/);
      expect(s.comments.length).toBeGreaterThan(0); // the opening comment, sent before any click
    });

    it("filters by code, tag and domain, and never shows another tenant's clicks", async () => {
      const all = await opened();
      const byCode = await opened(`?code=${a.code}`);
      const byTag = await opened('?tag=live-b');
      const byDomain = await opened(`?domain=${a.domain.toUpperCase()}`);
      const elsewhere = await opened('?domain=elsewhere.example', {}, other);
      const otherTenant = await opened('', {}, other);
      await click(a);
      await click(b);
      await click(a);
      await all.waitForClicks(3);
      await byCode.waitForClicks(2);
      await byTag.waitForClicks(1);
      await byDomain.waitForClicks(3);
      // The tag filter reads the link's tags: give it the time the others took, and more.
      await new Promise((r) => setTimeout(r, 500));
      // In order per link (one partition each); two links' clicks may arrive either way round.
      expect(
        all
          .clicks()
          .map((c) => c.code)
          .sort(),
      ).toEqual([a.code, a.code, b.code].sort());
      expect(byCode.clicks().map((c) => c.code)).toEqual([a.code, a.code]);
      expect(byTag.clicks().map((c) => c.code)).toEqual([b.code]);
      expect(byDomain.clicks().map((c) => c.id)).toEqual(all.clicks().map((c) => c.id));
      expect(elsewhere.clicks()).toEqual([]);
      expect(otherTenant.clicks()).toEqual([]);
    });

    it('resumes after Last-Event-ID with the clicks missed while away, in order', async () => {
      const watcher = await opened(); // stays: tells when a click reached the instance
      const first = await opened();
      await click(a);
      await click(b);
      const [c1, c2] = await first.waitForClicks(2);
      await first.close();
      await click(a); // while disconnected
      const c3 = (await watcher.waitForClicks(3))[2];
      const resumed = await opened('', { 'last-event-id': c1.id });
      const replayed = await resumed.waitForClicks(2);
      expect(replayed.map((c) => c.id)).toEqual([c2.id, c3.id]);
      expect(resumed.events.some((e) => e.event === 'gap')).toBe(false);
      await click(b);
      const more = await resumed.waitForClicks(3);
      expect(more[2].code).toBe(b.code);
    });

    it('sends a gap first when Last-Event-ID is older than the replay window or of another instance', async () => {
      const s = await opened();
      await click(a);
      const [old] = await s.waitForClicks(1);
      for (let i = 0; i < 6; i++) await click(b); // the window holds 5
      await s.waitForClicks(7);
      const late = await opened('', { 'last-event-id': old.id });
      await late.waitForClicks(5);
      expect(late.events[0]).toMatchObject({ event: 'gap' });
      expect(JSON.parse(late.events[0].data)).toEqual({ lastEventId: old.id, reason: 'expired' });
      expect(late.clicks().map((c) => c.id)).toEqual(
        s
          .clicks()
          .slice(2)
          .map((c) => c.id),
      );

      const foreign = await opened('', { 'last-event-id': 'zzzzzzzz.1' });
      await eventually('the gap event', async () => foreign.events.length > 0);
      expect(foreign.events[0]).toMatchObject({ event: 'gap' });
      expect(JSON.parse(foreign.events[0].data)).toEqual({ lastEventId: 'zzzzzzzz.1', reason: 'unknown' });
      expect(foreign.clicks()).toEqual([]);
    });

    it('answers 429 STREAM_LIMIT_REACHED past the open streams a tenant may hold, and lets one in again when one closes', async () => {
      const held = [await opened(), await opened(), await opened(), await opened()];
      const metrics = parseMetrics(await (await fetch(`${endpoints().admin.analytics}/metrics`)).text());
      expect(metrics.get('shortlink_analytics_live_streams')).toBeGreaterThanOrEqual(4);
      expect(metrics.get('shortlink_analytics_live_clicks_total')).toBeGreaterThan(0);
      const refused = await open();
      expect(await refused.problem()).toEqual({ status: 429, code: 'STREAM_LIMIT_REACHED', type: expect.stringContaining('application/problem+json') });
      // Another tenant is not held back.
      await opened('', {}, other);
      await held[0].close();
      const again = await eventually('a stream slot freed', async () => {
        const s = await open();
        if (s.status === 200) return s;
        await s.response.body?.cancel();
        return null;
      });
      streams.push(again);
    });

    it('carries a lead and a sale posted through the track API as `lead` and `sale` events, once each, to the streams of their link only', async () => {
      const g = endpoints().generation;
      const backend = await api(g, 'POST', '/api/v1/keys', key, { name: 'backend', scopes: ['conversions:write'] });
      expect(backend.status).toBe(201);
      const backendKey = backend.body.apiKey as string;
      const link = await api(g, 'POST', '/api/v1/links', key, { url: `https://shop.example/live?t=${Date.now()}`, trackConversions: true });
      expect(link.status).toBe(201);
      const res = await redirectOf(endpoints(), link.body.code as string);
      expect(res.status).toBe(302);
      const clickId = new URL(res.headers.get('location')!).searchParams.get('sl_cid')!;
      expect(clickId).toMatch(/^[A-Za-z0-9_-]{22}$/);
      const lead = (customerId: string) => api(g, 'POST', '/api/v1/track/lead', backendKey, { clickId, eventName: 'Sign up', customerId });

      // The instance's conversions reader starts at the end of its topic once it joined: report leads until it is reading.
      const warm = await opened();
      await eventually(
        'the stream to carry a lead',
        async () => {
          expect((await lead(`warm-${Date.now()}`)).status).toBe(201);
          await new Promise((r) => setTimeout(r, 300));
          return warm.of('lead').length > 0;
        },
        60_000,
        0,
      );
      await warm.close();

      const all = await opened();
      const ofLink = await opened(`?code=${link.body.code}`);
      const ofOther = await opened(`?code=${a.code}`);
      const otherTenant = await opened('', {}, other);
      expect((await lead('cus_live')).status).toBe(201);
      const sale = { customerId: 'cus_live', amount: 4900, currency: 'EUR', eventName: 'Purchase', invoiceId: `in_${Date.now()}` };
      expect((await api(g, 'POST', '/api/v1/track/sale', backendKey, sale)).status).toBe(201);
      // The same invoice again: counted once, so streamed once.
      expect((await api(g, 'POST', '/api/v1/track/sale', backendKey, sale)).body.duplicate).toBe(true);
      for (const s of [all, ofLink]) {
        await eventually('a lead and a sale', async () => s.of('lead').length === 1 && s.of('sale').length === 1);
        expect(s.of('lead')[0]).toEqual({
          id: expect.stringMatching(/^[a-z0-9]+\.\d+$/),
          time: expect.any(String),
          domain: link.body.domain,
          code: link.body.code,
          conversionId: expect.stringMatching(/^cnv_/),
          eventName: 'Sign up',
          customerId: 'cus_live',
          clickId,
        });
        expect(s.of('sale')[0]).toMatchObject({
          code: link.body.code,
          customerId: 'cus_live',
          eventName: 'Purchase',
          amount: 4900,
          currency: 'EUR',
          invoiceId: sale.invoiceId,
          clickId,
        });
        // In the tenant's sequence: the sale after the lead, each with an id a resume can start from.
        const ids = s.events.filter((e) => e.event === 'lead' || e.event === 'sale').map((e) => Number(e.id!.split('.')[1]));
        expect(ids[1]).toBeGreaterThan(ids[0]);
      }
      await new Promise((r) => setTimeout(r, 500));
      expect([all.of('lead').length, all.of('sale').length]).toEqual([1, 1]);
      expect([...ofOther.of('lead'), ...ofOther.of('sale')]).toEqual([]);
      expect([...otherTenant.of('lead'), ...otherTenant.of('sale')]).toEqual([]);
    }, 90_000);

    it('answers 400 INVALID_EVENT_ID to a malformed Last-Event-ID, 400 to an unknown filter, 401 without a key', async () => {
      for (const bad of ['nope', 'abc.', 'abc.-1', 'ABC.1', 'abc.1.2', `${'a'.repeat(40)}.1`]) {
        const s = await open('', { 'last-event-id': bad });
        expect({ bad, ...(await s.problem()) }).toEqual({ bad, status: 400, code: 'INVALID_EVENT_ID', type: expect.stringContaining('problem+json') });
      }
      const unknown = await open('?color=red');
      expect((await unknown.problem()).code).toBe('VALIDATION_FAILED');
      const anonymous = await SseClient.open(`${endpoints().analytics}/api/v1/events/stream`, {});
      expect((await anonymous.problem()).status).toBe(401);
    });
  });
}
