import { Webhook as StandardWebhook } from 'standardwebhooks';
import { InMemoryAuditLogStore } from '@shortlink/audit-domain/testing';
import { AuditLog } from '@shortlink/audit-domain';
import { InMemoryWebhookStore } from './testing';
import { clickEventsOf, nextAttemptAt, SecretBox, SendResult, WebhookDeliverer, WebhookService, WebhookTransport, WebhookUrlGuard } from './index';

const context = { actor: { type: 'key' as const, id: 'k1', name: 'ci' }, clientAddress: null };
const publicResolver = { addresses: async () => ['93.184.216.34'] };
const cursors = { seal: () => 'c', open: () => ({ createdAt: new Date(0), id: '0' }) };

/** Records what it was sent and answers what the test says; a port double, not a server. */
class ScriptedTransport implements WebhookTransport {
  readonly sent: Array<{ url: string; headers: Record<string, string>; body: string }> = [];
  answers: SendResult[] = [];
  async post(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<SendResult> {
    this.sent.push({ url, headers: { ...headers }, body });
    return this.answers.shift() ?? { statusCode: 204, error: null };
  }
}

function setup(now = { t: Date.now() }) {
  const store = new InMemoryWebhookStore();
  const audit = new InMemoryAuditLogStore();
  const box = new SecretBox('master-secret');
  const guard = new WebhookUrlGuard(publicResolver, false);
  const clock = { now: () => now.t };
  const service = new WebhookService({ store, box, guard, audit: new AuditLog(audit, { cursors, retentionMs: 1e9, clock }) }, { clock });
  const transport = new ScriptedTransport();
  const deliverer = new WebhookDeliverer(
    { store, transport, guard, box, audit },
    {
      schedule: { baseDelayMs: 1000, maxDelayMs: 60_000, windowMs: 86_400_000 },
      disableAfterMs: 3 * 86_400_000,
      clock,
      random: () => 0.5,
    },
  );
  return { store, audit, box, service, transport, deliverer, now };
}

const event = (id: string, tenantId = 't1') => ({ id, type: 'link.created' as const, tenantId, at: Date.parse('2026-12-05T10:00:00Z'), data: { code: 'abc' } });

describe('webhooks', () => {
  it('seals secrets so that only the same master secret opens them', () => {
    const sealed = new SecretBox('a').seal('whsec_x');
    expect(sealed).not.toContain('whsec_x');
    expect(new SecretBox('a').open(sealed)).toBe('whsec_x');
    expect(() => new SecretBox('b').open(sealed)).toThrow();
  });

  it('refuses private, loopback and link-local receivers unless allowed, with URL_NOT_ALLOWED', async () => {
    const guard = new WebhookUrlGuard({ addresses: async () => ['10.0.0.5'] }, false);
    for (const url of ['http://127.0.0.1:8080/h', 'http://[::1]/h', 'http://169.254.169.254/latest', 'https://internal.example.com/h'])
      await expect(guard.resolve(url)).rejects.toMatchObject({ code: 'URL_NOT_ALLOWED', details: { reason: 'private-address' } });
    await expect(guard.resolve('http://user:pw@example.com/')).rejects.toMatchObject({ code: 'URL_NOT_ALLOWED', details: { reason: 'credentials' } });
    await expect(guard.resolve('ftp://example.com/')).rejects.toMatchObject({ code: 'INVALID_URL' });
    await expect(new WebhookUrlGuard(publicResolver, true).resolve('http://127.0.0.1:8080/h')).resolves.toMatchObject({ addresses: ['127.0.0.1'] });
  });

  it('creates a webhook whose secret is shown once and stored sealed, and audits it', async () => {
    const { service, store, audit } = setup();
    const { webhook, secret } = await service.create('t1', { url: 'https://hooks.example.com/in', events: ['link.created'] }, context);
    expect(secret).toMatch(/^whsec_/);
    expect((await store.findWebhook('t1', webhook.id))!.secret).not.toContain(secret);
    await expect(service.create('t1', { url: 'https://hooks.example.com/in', events: ['link.exploded'] }, context)).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
    await expect(service.get('t2', webhook.id)).rejects.toMatchObject({ code: 'WEBHOOK_NOT_FOUND' });
    expect((await audit.list({ log: 't1', after: null, limit: 10 })).map((e) => e.action)).toEqual(['webhook.created']);
  });

  it('delivers a body that standardwebhooks verifies, retries with the same webhook-id, then succeeds', async () => {
    const { service, transport, deliverer, store, now } = setup();
    const { webhook, secret } = await service.create('t1', { url: 'https://hooks.example.com/in', events: ['link.created'] }, context);
    transport.answers = [
      { statusCode: 500, error: null },
      { statusCode: null, error: 'connection refused' },
    ];
    expect(await deliverer.accept([event('e1'), event('e1')])).toBe(2);
    await deliverer.pass();
    now.t += 10_000;
    await deliverer.pass();
    now.t += 10_000;
    await deliverer.pass();
    expect(transport.sent).toHaveLength(3);
    expect(new Set(transport.sent.map((s) => s.headers['webhook-id'])).size).toBe(1);
    const verified = new StandardWebhook(secret).verify(transport.sent[2].body, transport.sent[2].headers) as { type: string; data: object };
    expect(verified).toMatchObject({ type: 'link.created', data: { code: 'abc' } });
    const [delivery] = await store.listDeliveries(webhook.id, null, 10);
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 3 });
    expect((await store.findWebhook('t1', webhook.id))!.failingSince).toBeNull();
  });

  it('signs with the old and the new secret for the overlap after a rotation, then with the new only', async () => {
    const { service, transport, deliverer, now } = setup();
    const { webhook, secret: old } = await service.create('t1', { url: 'https://hooks.example.com/in', events: ['link.created'] }, context);
    const rotated = await service.rotateSecret('t1', webhook.id, context);
    await deliverer.accept([event('e2')]);
    await deliverer.pass();
    const sent = transport.sent[0];
    expect(sent.headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new StandardWebhook(old).verify(sent.body, sent.headers)).not.toThrow();
    expect(() => new StandardWebhook(rotated.secret).verify(sent.body, sent.headers)).not.toThrow();
    now.t += 24 * 3_600_000 + 1;
    await deliverer.accept([event('e3')]);
    await deliverer.pass();
    expect(transport.sent[1].headers['webhook-signature'].split(' ')).toHaveLength(1);
  });

  it('backs off exponentially with jitter and stops at the end of the window', () => {
    const schedule = { baseDelayMs: 1000, maxDelayMs: 8000, windowMs: 20_000 };
    const created = new Date(0);
    expect(nextAttemptAt(schedule, 1, created, new Date(0), () => 0)!.getTime()).toBe(500);
    expect(nextAttemptAt(schedule, 3, created, new Date(0), () => 1)!.getTime()).toBe(4000);
    expect(nextAttemptAt(schedule, 10, created, new Date(0), () => 1)!.getTime()).toBe(8000);
    expect(nextAttemptAt(schedule, 10, created, new Date(15_000), () => 1)).toBeNull();
  });

  it('disables an endpoint failing for 3 days and says so in its tenant audit log', async () => {
    const { service, transport, deliverer, store, audit, now } = setup();
    const { webhook } = await service.create('t1', { url: 'https://hooks.example.com/in', events: ['link.created'] }, context);
    transport.answers = Array.from({ length: 10 }, () => ({ statusCode: 503, error: null }));
    await deliverer.accept([event('a')]);
    await deliverer.pass();
    now.t += 3 * 86_400_000;
    await deliverer.accept([event('b')]);
    await deliverer.pass();
    expect((await store.findWebhook('t1', webhook.id))!).toMatchObject({ enabled: false, disabledReason: 'failing' });
    expect((await audit.list({ log: 't1', after: null, limit: 10 })).map((e) => e.action)).toContain('webhook.disabled');
    expect(await deliverer.accept([event('c')])).toBe(0);
  });

  it('groups clicks into one link.clicked event per tenant and second, with a replay-stable id', () => {
    const click = (seq: number, at: number, tenantId = 't1') =>
      ({
        producer: 'p',
        seq,
        kind: 'click',
        occurredAt: at,
        tenantId,
        linkId: '1',
        domain: 'd',
        code: 'c',
        visitor: 1,
        country: null,
        region: null,
        city: null,
        refererHost: null,
        userAgent: '',
        variant: null,
        source: 'link',
      }) as const;
    const events = clickEventsOf([click(1, 1000), click(2, 1500), click(3, 2100), click(4, 1200, 't2')]);
    expect(events.map((e) => [e.tenantId, e.at, (e.data.clicks as unknown[]).length])).toEqual([
      ['t1', 1000, 2],
      ['t1', 2000, 1],
      ['t2', 1000, 1],
    ]);
    expect(clickEventsOf([click(2, 1500), click(1, 1000)])[0].id).toBe(events[0].id);
  });
});
