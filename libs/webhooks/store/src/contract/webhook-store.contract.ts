import { randomUUID } from 'crypto';
import type { Delivery, Webhook, WebhookStore } from '@shortlink/webhooks-domain';

const T0 = Date.UTC(2026, 0, 15, 10, 0, 0, 123);
const at = (offsetMs: number) => new Date(T0 + offsetMs);

function aWebhook(tenantId: string, overrides: Partial<Webhook> = {}): Webhook {
  return {
    id: `wh_${randomUUID().replace(/-/g, '')}`,
    tenantId,
    url: 'https://hooks.example.com/in?x=1',
    events: ['link.clicked', 'link.created'],
    description: 'CRM sync ✓',
    enabled: true,
    disabledReason: null,
    secret: 'v1.sealed-current',
    previousSecret: null,
    previousSecretUntil: null,
    failingSince: null,
    createdAt: at(0),
    updatedAt: at(0),
    ...overrides,
  };
}

function aDelivery(webhook: Webhook, offsetMs: number, overrides: Partial<Delivery> = {}): Delivery {
  return {
    id: `msg_${randomUUID().replace(/-/g, '')}`,
    webhookId: webhook.id,
    tenantId: webhook.tenantId,
    eventType: 'link.created',
    payload: JSON.stringify({ type: 'link.created', data: { code: 'é' } }),
    status: 'pending',
    attempts: 0,
    lastError: null,
    lastStatusCode: null,
    nextAttemptAt: at(offsetMs),
    createdAt: at(offsetMs),
    updatedAt: at(offsetMs),
    ...overrides,
  };
}

/** One behaviour, every backend: SQLite in unit runs, the MySQL meta database in integration runs (docs/design.md, "Webhooks"). */
export function describeWebhookStoreContract(backend: string, open: () => Promise<{ webhooks: WebhookStore; close(): Promise<void> }>) {
  describe(`webhook store contract: ${backend}`, () => {
    let store: WebhookStore;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ webhooks: store, close } = await open());
    });
    afterAll(() => close());

    it('stores every field of an endpoint, lists a tenant’s oldest first, others apart, and counts them', async () => {
      const tenant = randomUUID();
      const full = aWebhook(tenant, {
        createdAt: at(5),
        previousSecret: 'v1.sealed-old',
        previousSecretUntil: at(86_400_000),
        failingSince: at(3),
        enabled: false,
        disabledReason: 'failing',
      });
      const first = aWebhook(tenant);
      await store.insertWebhook(full);
      await store.insertWebhook(first);
      await store.insertWebhook(aWebhook(randomUUID()));
      expect(await store.findWebhook(tenant, full.id)).toEqual(full);
      expect(await store.findWebhook(randomUUID(), full.id)).toBeNull();
      expect((await store.listWebhooks(tenant)).map((w) => w.id)).toEqual([first.id, full.id]);
      expect(await store.countWebhooks(tenant)).toBe(2);
      expect((await store.subscribers(tenant, 'link.created')).map((w) => w.id)).toEqual([first.id]);
      expect(await store.subscribers(tenant, 'link.deleted')).toEqual([]);
    });

    it('updates and deletes only an endpoint of that tenant; deleting takes its deliveries', async () => {
      const tenant = randomUUID();
      const w = aWebhook(tenant);
      await store.insertWebhook(w);
      await store.enqueue([aDelivery(w, 0)]);
      expect(await store.updateWebhook({ ...w, tenantId: randomUUID(), url: 'https://elsewhere.example.com/' })).toBe(false);
      const edited = { ...w, url: 'https://hooks.example.com/v2', events: ['link.deleted' as const], updatedAt: at(9) };
      expect(await store.updateWebhook(edited)).toBe(true);
      expect(await store.findWebhook(tenant, w.id)).toEqual(edited);
      expect(await store.deleteWebhook(randomUUID(), w.id)).toBe(false);
      expect(await store.deleteWebhook(tenant, w.id)).toBe(true);
      expect(await store.findWebhook(tenant, w.id)).toBeNull();
      expect(await store.listDeliveries(w.id, null, 10)).toEqual([]);
      expect(await store.deleteWebhook(tenant, w.id)).toBe(false);
    });

    it('keeps the first failure time until a success clears it, and disables an enabled endpoint once', async () => {
      const w = aWebhook(randomUUID());
      await store.insertWebhook(w);
      await store.setFailingSince(w.id, at(10));
      await store.setFailingSince(w.id, at(20));
      expect((await store.findWebhook(w.tenantId, w.id))!.failingSince).toEqual(at(10));
      await store.setFailingSince(w.id, null);
      expect((await store.findWebhook(w.tenantId, w.id))!.failingSince).toBeNull();
      expect(await store.disable(w.id, 'failing', at(30))).toBe(true);
      expect(await store.disable(w.id, 'failing', at(31))).toBe(false);
      expect(await store.findWebhook(w.tenantId, w.id)).toMatchObject({ enabled: false, disabledReason: 'failing', updatedAt: at(30) });
    });

    it('enqueues a delivery id once, claims due ones once each, records attempts, requeues', async () => {
      const w = aWebhook(randomUUID());
      await store.insertWebhook(w);
      // Far in the past: due before every other suite's deliveries, whatever they left behind.
      const d = aDelivery(w, -10 * 365 * 86_400_000);
      await store.enqueue([d, d]);
      await store.enqueue([{ ...d, payload: '{"changed":true}' }]);
      expect(await store.findDelivery(w.id, d.id)).toEqual(d);
      const now = at(0);
      const lease = at(60_000);
      const claimed = await store.claimDue(now, lease, 1000);
      expect(claimed.filter((c) => c.id === d.id)).toEqual([d]);
      expect((await store.claimDue(now, lease, 1000)).filter((c) => c.id === d.id)).toEqual([]);
      await store.recordAttempt(d.id, { status: 'pending', lastError: 'receiver answered 500', lastStatusCode: 500, nextAttemptAt: at(1000), at: at(1) });
      expect(await store.findDelivery(w.id, d.id)).toMatchObject({ attempts: 1, status: 'pending', lastStatusCode: 500, nextAttemptAt: at(1000) });
      await store.recordAttempt(d.id, { status: 'succeeded', lastError: null, lastStatusCode: 204, nextAttemptAt: null, at: at(2) });
      expect(await store.findDelivery(w.id, d.id)).toMatchObject({ attempts: 2, status: 'succeeded', lastError: null, nextAttemptAt: null });
      expect((await store.claimDue(at(10_000_000), lease, 1000)).filter((c) => c.id === d.id)).toEqual([]);
      await store.requeue(d.id, at(3));
      expect(await store.findDelivery(w.id, d.id)).toMatchObject({ attempts: 2, status: 'pending', nextAttemptAt: at(3) });
      expect(await store.findDelivery(randomUUID(), d.id)).toBeNull();
    });

    it('pages a webhook’s deliveries newest first by time then id', async () => {
      const w = aWebhook(randomUUID());
      await store.insertWebhook(w);
      const ds = [aDelivery(w, 0, { id: 'msg_a' + w.id.slice(3, 31) }), aDelivery(w, 0, { id: 'msg_b' + w.id.slice(3, 31) }), aDelivery(w, 5)];
      await store.enqueue(ds);
      const page1 = await store.listDeliveries(w.id, null, 2);
      expect(page1.map((d) => d.id)).toEqual([ds[2].id, ds[1].id]);
      const last = page1[1];
      expect((await store.listDeliveries(w.id, { createdAt: last.createdAt, id: last.id }, 2)).map((d) => d.id)).toEqual([ds[0].id]);
    });
  });
}
