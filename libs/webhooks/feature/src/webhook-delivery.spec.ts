import { InMemoryAuditLogStore } from '@shortlink/audit-domain/testing';
import { ClickBatch, ClickColumns, ClickEvent, ClickEventSource, ColumnarClickBatch } from '@shortlink/clicks-domain';
import { loadConfig } from '@shortlink/config';
import {
  clickEventsOf,
  Delivery,
  PlatformEventSource,
  SecretBox,
  Webhook,
  WebhookDeliverer,
  WebhookEventType,
  WebhookUrlGuard,
} from '@shortlink/webhooks-domain';
import { InMemoryWebhookStore } from '@shortlink/webhooks-domain/testing';
import { WebhookDelivery } from './webhook-delivery';

const T = Date.UTC(2026, 11, 7, 8, 0, 0);

const webhook = (id: string, tenantId: string, events: WebhookEventType[]): Webhook => ({
  id,
  tenantId,
  url: `https://${id}.example.com/hook`,
  events,
  description: '',
  enabled: true,
  disabledReason: null,
  secret: new SecretBox('master').seal('whsec_x'),
  previousSecret: null,
  previousSecretUntil: null,
  failingSince: null,
  createdAt: new Date(T),
  updatedAt: new Date(T),
});

const click = (seq: number, tenantId: string, code: string, kind: ClickEvent['kind'] = 'click'): ClickEvent => ({
  producer: 'redirect-1',
  seq,
  kind,
  occurredAt: T + seq * 400,
  tenantId,
  linkId: tenantId ? `${tenantId}-${code}` : '',
  domain: 'sho.rt',
  code,
  visitor: 1000 + seq,
  country: seq % 2 ? 'FR' : null,
  region: null,
  city: null,
  source: seq % 3 ? 'link' : 'qr',
  refererHost: seq % 2 ? 'news.example.com' : null,
  userAgent: 'Mozilla/5.0',
  variant: seq % 4 ? null : 1,
});

/** The columns of `clicks` as a Kafka batch carries them: records of three clicks. */
function columnsOf(clicks: readonly ClickEvent[]): ClickColumns {
  const columns = new ClickColumns();
  clicks.forEach((c, i) => {
    if (i % 3 === 0) columns.beginRecord(String(100 + i / 3), T);
    columns.add(c);
  });
  return columns;
}

/** Deliveries without the time they were made, ordered by id. */
const stored = async (store: InMemoryWebhookStore, webhookIds: string[]) =>
  (await Promise.all(webhookIds.map((id) => store.listDeliveries(id, null, 1000))))
    .flat()
    .map(({ id, webhookId, tenantId, eventType, payload }: Delivery) => ({ id, webhookId, tenantId, eventType, payload }))
    .sort((a, b) => a.id.localeCompare(b.id));

const okTransport = { post: async () => ({ statusCode: 200, error: null }) };
const publicGuard = () => new WebhookUrlGuard({ addresses: async () => ['93.184.215.14'] }, false);

describe('WebhookDelivery, the click consumer', () => {
  // t1 wants clicks, t2 only creations, t3 has no webhook; '' is an orphan visit's (no tenant).
  const hooks = [webhook('wh-t1', 't1', ['link.clicked']), webhook('wh-t2', 't2', ['link.created'])];
  const clicks = [
    click(0, 't1', 'spring'),
    click(1, 't2', 'menu'),
    click(2, 't3', 'docs'),
    click(3, 't1', 'spring'),
    click(4, '', 'typo', 'orphan'),
    click(5, 't1', 'summer'),
    click(6, 't3', 'docs'),
    click(7, 't1', 'gone', 'orphan'),
    click(8, 't2', 'menu'),
  ];

  async function deliveryWith(store: InMemoryWebhookStore) {
    for (const h of hooks) await store.insertWebhook(h);
    let handler: ((batch: ClickBatch) => Promise<void>) | null = null;
    const clickSource: ClickEventSource = {
      start: async (h) => void (handler = h),
      lag: async () => new Map(),
      close: async () => undefined,
    };
    const events: PlatformEventSource = { start: async () => undefined, close: async () => undefined };
    const delivery = new WebhookDelivery(
      {
        store,
        transport: okTransport,
        guard: publicGuard(),
        codeSecret: 'master',
        audit: new InMemoryAuditLogStore(),
        events,
        clicks: clickSource,
      },
      loadConfig({}),
      { log: () => undefined, warn: () => undefined, error: () => undefined },
    );
    delivery.start();
    // Only what the click consumer stores is looked at here: no pass attempts a delivery.
    await delivery.deliverer.stop();
    return { delivery, handle: (batch: ClickBatch) => handler!(batch) };
  }

  it("stores, from a columnar batch, the deliveries the batch's click objects give, making objects only of subscribed tenants' clicks", async () => {
    const store = new InMemoryWebhookStore();
    const { delivery, handle } = await deliveryWith(store);
    const columns = columnsOf(clicks);
    const made = jest.spyOn(columns, 'eventAt');
    const asked = jest.spyOn(store, 'subscribers');
    const batch = new ColumnarClickBatch('kafka:clicks', 2, columns);
    const messages = jest.spyOn(batch, 'messages', 'get');
    try {
      await handle(batch);
    } finally {
      await delivery.stop();
    }

    // What the object path stores: every click of the batch as an object, through the same deliverer.
    const objectStore = new InMemoryWebhookStore();
    for (const h of hooks) await objectStore.insertWebhook(h);
    const reference = new WebhookDeliverer(
      { store: objectStore, transport: okTransport, guard: publicGuard(), box: new SecretBox('master'), audit: new InMemoryAuditLogStore() },
      { schedule: loadConfig({}).webhooks.retry, disableAfterMs: 1 },
    );
    await reference.accept(clickEventsOf(clicks));

    const ours = await stored(store, ['wh-t1', 'wh-t2']);
    expect(ours).toEqual(await stored(objectStore, ['wh-t1', 'wh-t2']));
    // t1's three clicks (its orphan left out), in the deliveries of their seconds, and nobody else's.
    expect(ours.map((d) => d.webhookId)).toEqual(ours.map(() => 'wh-t1'));
    const delivered = ours.flatMap((d) => (JSON.parse(d.payload) as { data: { clicks: { code: string }[] } }).data.clicks.map((c) => c.code));
    expect(delivered.sort()).toEqual(['spring', 'spring', 'summer']);

    expect(made.mock.calls.map(([i]) => i)).toEqual([0, 3, 5]);
    expect(messages).not.toHaveBeenCalled();
    // Each tenant of the batch asked about; the orphan visit's empty tenant never.
    expect(new Set(asked.mock.calls.map(([tenant, type]) => `${tenant} ${type}`))).toEqual(new Set(['t1 link.clicked', 't2 link.clicked', 't3 link.clicked']));
  });

  it('stores nothing and makes no object when no tenant of the batch wants clicks', async () => {
    const store = new InMemoryWebhookStore();
    const { delivery, handle } = await deliveryWith(store);
    const columns = columnsOf(clicks.filter((c) => c.tenantId !== 't1'));
    const made = jest.spyOn(columns, 'eventAt');
    try {
      await handle(new ColumnarClickBatch('kafka:clicks', 0, columns));
    } finally {
      await delivery.stop();
    }
    expect(await stored(store, ['wh-t1', 'wh-t2'])).toEqual([]);
    expect(made).not.toHaveBeenCalled();
  });

  it('takes the objects of a batch without columns (the memory bus of objects) as they are', async () => {
    const store = new InMemoryWebhookStore();
    const { delivery, handle } = await deliveryWith(store);
    const messages = clicks.map((event, i) => ({ partition: 0, offset: String(i), recordedAt: T, event }));
    try {
      await handle({ source: 'memory', partition: 0, messages });
    } finally {
      await delivery.stop();
    }
    const codes = (await stored(store, ['wh-t1'])).flatMap((d) =>
      (JSON.parse(d.payload) as { data: { clicks: { code: string }[] } }).data.clicks.map((c) => c.code),
    );
    expect(codes.sort()).toEqual(['spring', 'spring', 'summer']);
  });
});
