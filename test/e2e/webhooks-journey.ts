import { createServer, IncomingHttpHeaders, Server } from 'http';
import { AddressInfo } from 'net';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Endpoints, eventually } from '@shortlink/harness';
import { postBatch } from './batch-journey';
import { BROWSER_UA } from './support';
import { api } from './tenant-journey';

/** What one POST brought: its headers and body, and whether each secret given verified it. */
interface Received {
  readonly id: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly answered: number;
}

/**
 * A webhook receiver as a customer writes one: node:http, verifying with `standardwebhooks`, and
 * idempotent by `webhook-id` (a message applied once, however often it comes). `failNext` makes it
 * answer 503 to that many requests first (an outage), of those `failOnly` matches when it is set (so
 * a late redelivery of an earlier message does not take one); each request is kept.
 */
export class Receiver {
  readonly received: Received[] = [];
  /** webhook-id → the verified body, applied once. */
  readonly applied = new Map<string, { type: string; data: Record<string, unknown> }>();
  secrets: string[] = [];
  failNext = 0;
  failOnly?: (body: string) => boolean;
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        const id = String(req.headers['webhook-id']);
        const fail = this.failNext > 0 && (!this.failOnly || this.failOnly(body));
        if (fail) this.failNext--;
        const answered = fail ? 503 : this.verify(body, req.headers) ? 204 : 401;
        this.received.push({ id, headers: req.headers, body, answered });
        if (answered === 204 && !this.applied.has(id)) this.applied.set(id, JSON.parse(body));
        res.statusCode = answered;
        res.end();
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  verify(body: string, headers: IncomingHttpHeaders, secrets = this.secrets): boolean {
    return secrets.some((secret) => {
      try {
        new StandardWebhook(secret).verify(body, headers as Record<string, string>);
        return true;
      } catch {
        return false;
      }
    });
  }

  /** The applied messages of a type whose data matches. */
  of(type: string, match: (data: Record<string, unknown>) => boolean = () => true) {
    return [...this.applied.entries()].filter(([, m]) => m.type === type && match(m.data));
  }

  stop(): Promise<void> {
    return new Promise((r) => {
      this.server.close(() => r());
      this.server.closeAllConnections();
    });
  }

  /** Listens again on the same port (a receiver restarted after a crash or a deploy). */
  async restart(): Promise<void> {
    const port = Number(new URL(this.url).port);
    await new Promise<void>((r) => this.server.listen(port, '127.0.0.1', r));
  }
}

const linkOf = (data: Record<string, unknown>) => data.link as { code: string; url: string; title: string | null };

/**
 * Webhooks over HTTP, on either profile: the apps run with WEBHOOK_ALLOW_PRIVATE=true
 * (the receiver is on 127.0.0.1) and a short retry schedule (WEBHOOK_RETRY_BASE_MS).
 */
export function describeWebhookJourney(endpoints: () => Endpoints, newTenant: () => Promise<{ apiKey: string }>) {
  describe('webhooks', () => {
    const receiver = new Receiver();
    let apiKey: string;
    let webhookId: string;
    const gen = () => endpoints().generation;

    beforeAll(async () => {
      await receiver.start();
      ({ apiKey } = await newTenant());
    });
    afterAll(() => receiver.stop());

    it('creates a webhook with a whsec_ secret shown once, lists, reads and edits it, every change audited', async () => {
      const made = await api(gen(), 'POST', '/api/v1/webhooks', apiKey, {
        url: receiver.url,
        events: ['link.created', 'link.updated', 'link.deleted', 'link.clicked', 'batch.completed'],
        description: 'e2e',
      });
      expect(made.status).toBe(201);
      expect(made.body.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
      webhookId = made.body.id;
      receiver.secrets = [made.body.secret];
      const listed = await api(gen(), 'GET', '/api/v1/webhooks', apiKey);
      expect(listed.body.webhooks.map((w: { id: string }) => w.id)).toEqual([webhookId]);
      expect(listed.text).not.toContain(made.body.secret);
      const edited = await api(gen(), 'PATCH', `/api/v1/webhooks/${webhookId}`, apiKey, { description: 'e2e receiver' });
      expect(edited).toMatchObject({ status: 200, body: { description: 'e2e receiver', enabled: true } });
      expect((await api(gen(), 'GET', `/api/v1/webhooks/${webhookId}`, apiKey)).body.description).toBe('e2e receiver');
      const bad = await api(gen(), 'POST', '/api/v1/webhooks', apiKey, { url: receiver.url, events: ['link.exploded'] });
      expect(bad).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
      const log = await api(gen(), 'GET', '/api/v1/audit-log?action=webhook', apiKey);
      expect(log.body.entries.map((e: { action: string }) => e.action)).toEqual(['webhook.updated', 'webhook.created']);
      expect(log.text).not.toContain(made.body.secret);
    });

    it('delivers link.created, link.updated, link.clicked, batch.completed and link.deleted, each verified by standardwebhooks', async () => {
      const made = await api(gen(), 'POST', '/api/v1/links', apiKey, { url: 'https://example.com/webhooks' });
      expect(made.status).toBe(201);
      const code = made.body.code as string;
      await eventually('link.created', async () => receiver.of('link.created', (d) => linkOf(d).code === code).length === 1);
      expect(await api(gen(), 'PATCH', `/api/v1/links/${code}`, apiKey, { title: 'edited' })).toMatchObject({ status: 200 });
      await eventually('link.updated', async () => receiver.of('link.updated', (d) => linkOf(d).title === 'edited').length === 1);
      for (let i = 0; i < 3; i++) {
        const visit = await fetch(made.body.shortUrl, { redirect: 'manual', headers: { 'user-agent': BROWSER_UA } });
        expect(visit.status).toBeGreaterThanOrEqual(301);
      }
      await eventually(
        'link.clicked with the three clicks',
        async () =>
          receiver
            .of('link.clicked')
            .flatMap(([, m]) => m.data.clicks as Array<{ code: string }>)
            .filter((c) => c.code === code).length === 3,
      );
      const batch = await postBatch(gen(), apiKey, [
        `${JSON.stringify({ url: 'https://example.com/b1' })}\n`,
        `${JSON.stringify({ url: 'https://example.com/b2' })}\n`,
      ]);
      expect(batch.status).toBe(200);
      await eventually('batch.completed', async () => receiver.of('batch.completed', (d) => d.created === 2).length === 1);
      expect((await api(gen(), 'DELETE', `/api/v1/links/${code}`, apiKey)).status).toBe(204);
      await eventually('link.deleted', async () => receiver.of('link.deleted', (d) => linkOf(d).code === code).length === 1);
      expect(receiver.received.every((r) => r.answered === 204)).toBe(true);
    });

    it('retries a receiver that fails, with the same webhook-id, until it recovers; the idempotent receiver applies it once', async () => {
      receiver.failNext = 2;
      receiver.failOnly = (body) => body.includes('https://example.com/outage');
      const made = await api(gen(), 'POST', '/api/v1/links', apiKey, { url: 'https://example.com/outage' });
      const code = made.body.code as string;
      const [[id]] = await eventually('the delivery after the outage', async () => {
        const found = receiver.of('link.created', (d) => linkOf(d).code === code);
        return found.length ? found : null;
      });
      receiver.failOnly = undefined;
      const attempts = receiver.received.filter((r) => r.id === id);
      expect(attempts.map((r) => r.answered)).toEqual([503, 503, 204]);
      // The deliverer records the answer after the receiver sent it: the record may lag the request by a moment.
      const delivery = await eventually('the delivery recorded as succeeded', async () => {
        const page = await api(gen(), 'GET', `/api/v1/webhooks/${webhookId}/deliveries?limit=50`, apiKey);
        const found = page.body.deliveries.find((d: { id: string }) => d.id === id);
        return found?.status === 'succeeded' && found;
      });
      expect(delivery).toMatchObject({ status: 'succeeded', attempts: 3, lastStatusCode: 204 });
    });

    it('keeps what happened while the receiver was down and delivers it once it listens again, each message applied once', async () => {
      await receiver.stop();
      const codes: string[] = [];
      try {
        for (let i = 0; i < 3; i++) codes.push((await api(gen(), 'POST', '/api/v1/links', apiKey, { url: `https://example.com/down-${i}` })).body.code);
        // Every one of them was tried, refused and scheduled again (backoff) while nothing listened.
        await eventually('failed attempts while the receiver is down', async () => {
          const page = await api(gen(), 'GET', `/api/v1/webhooks/${webhookId}/deliveries?limit=10`, apiKey);
          const fresh = page.body.deliveries.filter(
            (d: { eventType: string; payload: { data: Record<string, unknown> } }) =>
              d.eventType === 'link.created' && codes.includes(linkOf(d.payload.data).code),
          );
          return (
            fresh.length === 3 &&
            fresh.every((d: { attempts: number; status: string; lastError: string }) => d.attempts >= 3 && d.status === 'pending' && d.lastError)
          );
        });
      } finally {
        await receiver.restart();
      }
      await eventually('every message after the restart', async () =>
        codes.every((code) => receiver.of('link.created', (d) => linkOf(d).code === code).length === 1),
      );
      for (const code of codes) {
        const [[id]] = receiver.of('link.created', (d) => linkOf(d).code === code);
        expect(receiver.received.filter((r) => r.id === id).map((r) => r.answered)).toEqual([204]);
      }
    });

    it('redelivers a delivery under its own webhook-id, which the idempotent receiver does not apply twice', async () => {
      const page = await api(gen(), 'GET', `/api/v1/webhooks/${webhookId}/deliveries?limit=2`, apiKey);
      expect(page.body.deliveries).toHaveLength(2);
      expect(page.body.nextCursor).toEqual(expect.any(String));
      const next = await api(gen(), 'GET', `/api/v1/webhooks/${webhookId}/deliveries?limit=2&cursor=${page.body.nextCursor}`, apiKey);
      expect(next.body.deliveries[0].id).not.toBe(page.body.deliveries[1].id);
      const id = page.body.deliveries[0].id as string;
      const before = receiver.received.filter((r) => r.id === id).length;
      const again = await api(gen(), 'POST', `/api/v1/webhooks/${webhookId}/deliveries/${id}/redeliver`, apiKey);
      expect(again).toMatchObject({ status: 202, body: { id, status: 'pending' } });
      await eventually('the redelivery', async () => receiver.received.filter((r) => r.id === id).length === before + 1);
      expect([...receiver.applied.keys()].filter((k) => k === id)).toHaveLength(1);
      expect((await api(gen(), 'POST', `/api/v1/webhooks/${webhookId}/deliveries/msg_nope/redeliver`, apiKey)).body.code).toBe('DELIVERY_NOT_FOUND');
    });

    it('signs with the old and the new secret after a rotation: a receiver holding either verifies', async () => {
      const old = receiver.secrets[0];
      const rotated = await api(gen(), 'POST', `/api/v1/webhooks/${webhookId}/rotate-secret`, apiKey);
      expect(rotated.status).toBe(200);
      expect(rotated.body.secret).toMatch(/^whsec_/);
      expect(Date.parse(rotated.body.previousSecretValidUntil) - Date.now()).toBeGreaterThan(23 * 3_600_000);
      receiver.secrets = [old, rotated.body.secret];
      const made = await api(gen(), 'POST', '/api/v1/links', apiKey, { url: 'https://example.com/rotated' });
      const [[id]] = await eventually('the delivery after the rotation', async () => {
        const found = receiver.of('link.created', (d) => linkOf(d).code === made.body.code);
        return found.length ? found : null;
      });
      const message = receiver.received.find((r) => r.id === id)!;
      expect(String(message.headers['webhook-signature']).split(' ')).toHaveLength(2);
      expect(receiver.verify(message.body, message.headers, [old])).toBe(true);
      expect(receiver.verify(message.body, message.headers, [rotated.body.secret])).toBe(true);
      expect(receiver.verify(message.body, message.headers, ['whsec_' + Buffer.alloc(32, 7).toString('base64')])).toBe(false);
      const log = await api(gen(), 'GET', '/api/v1/audit-log?action=webhook.secret_rotated', apiKey);
      expect(log.body.entries).toHaveLength(1);
    });

    it('deletes a webhook: 204, then 404 WEBHOOK_NOT_FOUND, and another tenant never sees it', async () => {
      const other = await newTenant();
      expect((await api(gen(), 'GET', `/api/v1/webhooks/${webhookId}`, other.apiKey)).body.code).toBe('WEBHOOK_NOT_FOUND');
      expect((await api(gen(), 'DELETE', `/api/v1/webhooks/${webhookId}`, apiKey)).status).toBe(204);
      expect(await api(gen(), 'GET', `/api/v1/webhooks/${webhookId}`, apiKey)).toMatchObject({ status: 404, body: { code: 'WEBHOOK_NOT_FOUND' } });
      const log = await api(gen(), 'GET', '/api/v1/audit-log?action=webhook.deleted', apiKey);
      expect(log.body.entries).toHaveLength(1);
    });
  });
}

/** Without WEBHOOK_ALLOW_PRIVATE: a receiver on a private or loopback address is refused at creation. */
export function describeWebhookRefusals(generation: () => string, newTenant: () => Promise<{ apiKey: string }>) {
  it('refuses http://127.0.0.1, a link-local address and a name resolving to loopback with 400 URL_NOT_ALLOWED (private-address)', async () => {
    const { apiKey } = await newTenant();
    for (const url of ['http://127.0.0.1:9/hooks', 'http://169.254.169.254/latest/meta-data', 'http://localhost:9/hooks']) {
      const res = await api(generation(), 'POST', '/api/v1/webhooks', apiKey, { url, events: ['link.created'] });
      expect({ url, status: res.status, type: res.headers.get('content-type'), code: res.body.code, reason: res.body.reason }).toEqual({
        url,
        status: 400,
        type: expect.stringContaining('application/problem+json'),
        code: 'URL_NOT_ALLOWED',
        reason: 'private-address',
      });
    }
    expect((await api(generation(), 'GET', '/api/v1/webhooks', apiKey)).body.webhooks).toEqual([]);
  });
}
