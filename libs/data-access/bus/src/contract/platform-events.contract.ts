import { randomUUID } from 'crypto';
import type { PlatformEvent, PlatformEventSink, PlatformEventSource } from '@shortlink/webhooks-domain';

const anEvent = (tenantId: string, i: number): PlatformEvent => ({
  id: `evt_${randomUUID().replace(/-/g, '')}`,
  type: 'link.created',
  tenantId,
  at: Date.UTC(2026, 11, 5, 9, 0, 0, i),
  data: { link: { code: `c${i}`, title: 'é ✓' } },
});

/** Waits (polling, bounded) until `done` holds. */
async function until(what: string, done: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The events topic, one behaviour on every driver (docs/design.md, "Webhooks"): the in-process
 * queue in unit runs, Kafka in integration runs. `open` gives a sink and a source of one fresh
 * topic and group.
 */
export function describePlatformEventsContract(backend: string, open: () => Promise<{ sink: PlatformEventSink; source: PlatformEventSource }>) {
  describe(`platform events contract: ${backend}`, () => {
    it('hands every event published, whole, a tenant’s in publishing order, also those published before the consumer started', async () => {
      const { sink, source } = await open();
      const tenant = randomUUID();
      const events = Array.from({ length: 5 }, (_, i) => anEvent(tenant, i));
      await sink.publish(events.slice(0, 2));
      const got: PlatformEvent[] = [];
      await source.start(async (batch) => void got.push(...batch));
      await sink.publish(events.slice(2));
      await until('five events', () => got.length >= 5);
      expect(got.filter((e) => e.tenantId === tenant)).toEqual(events);
      await source.close();
      await sink.close();
    });

    it('hands a batch whose handler threw again, so nothing is lost (at-least-once)', async () => {
      const { sink, source } = await open();
      const event = anEvent(randomUUID(), 1);
      let calls = 0;
      const handled: string[] = [];
      await source.start(async (batch) => {
        calls++;
        if (calls === 1) throw new Error('meta database down');
        handled.push(...batch.map((e) => e.id));
      });
      await sink.publish([event]);
      await until('the event after a failure', () => handled.includes(event.id));
      expect(calls).toBeGreaterThanOrEqual(2);
      await source.close();
      await sink.close();
    });
  });
}
