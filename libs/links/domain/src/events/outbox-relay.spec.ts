import { InMemoryLinkRepository } from '../testing/in-memory-link-repository';
import { aTestLink } from '../testing/links';
import { RecordingChangeFeed, RecordingLinkCache } from '../testing/in-memory-ports';
import { CacheEventConsumer } from './cache-consumer';
import { createdEvent, deletedEvent, editedEvent, LinkChangeEvent, LinkEventOutboxes } from './link-events';
import { LinkEventConsumer, LinkEventRelay, LinkEventRelayOptions } from './outbox-relay';

const LEASE = 10_000;
const CONFIRM = 3000;

const aLink = aTestLink;

/**
 * The outbox relay by explicit rounds on a clock the test moves (docs/design.md, "Edits reach every
 * instance"): shards are in-memory doubles that write each change's event with it, as the SQL stores
 * do in one transaction (the contract suite holds them to the same rules).
 */
describe('LinkEventRelay', () => {
  const setup = (owner = 'gen-a') => {
    const clock = { t: 1_000_000, now: () => clock.t };
    const repo = new InMemoryLinkRepository(['a', 'b'], { stamp: { owner, leaseMs: LEASE }, clock });
    const cache = new RecordingLinkCache();
    const feed = new RecordingChangeFeed();
    const relayAs = (
      name: string,
      consumers: LinkEventConsumer[] = [new CacheEventConsumer(cache, feed, repo)],
      options: Partial<LinkEventRelayOptions> = {},
    ) => {
      const outboxes: LinkEventOutboxes = { stamp: { owner: name, leaseMs: LEASE }, all: repo.outboxes().all };
      return new LinkEventRelay(outboxes, consumers, { intervalMs: 1000, leaseMs: LEASE, confirmAfterMs: CONFIRM, clock, ...options });
    };
    const shardOf = (code: string) => repo.shards.find((s) => s.shardName === repo.shardOf(code))!;
    return { clock, repo, cache, feed, relay: relayAs(owner), relayAs, shardOf };
  };

  it('delivers an event the request could not (the cache was down) at the first round once the cache answers, then reads it back and deletes it from the outbox', async () => {
    const { repo, cache, feed, relay, clock, shardOf } = setup();
    const link = aLink('a1');
    await repo.insert(link);
    const edited = { ...link, targetUrl: 'https://example.com/new', version: 2 };
    await shardOf('a1').replace(edited, 1);
    cache.down = true;
    expect(await relay.deliverNow([createdEvent(link), editedEvent(edited)])).toBe(false);
    await relay.round();
    expect(cache.values.size).toBe(0);
    expect(relay.counts.failed).toBe(4); // twice each: the request, then the round
    cache.down = false;
    clock.t += 1000;
    await relay.round();
    expect(cache.newLinks).toEqual([{ domain: 'sho.rt', code: 'a1' }]);
    expect(cache.values.get('sho.rt/a1')).toMatchObject({ targetUrl: 'https://example.com/new', version: 2 });
    expect(feed.published).toEqual([{ domain: 'sho.rt', code: 'a1', version: 2 }]);
    expect(repo.outboxEvents()).toHaveLength(2);
    clock.t += CONFIRM - 1;
    await relay.round();
    expect(repo.outboxEvents()).toHaveLength(2); // not before the read-back
    clock.t += 1;
    await relay.round();
    expect(repo.outboxEvents()).toEqual([]);
    expect(relay.pending()).toEqual({ events: 0, oldestMs: 0 });
    expect(feed.published).toHaveLength(1); // the read-back found the value: nothing told twice
    expect(relay.counts).toMatchObject({ redelivered: 0, settled: 2 });
  });

  it('does not deliver again what the request delivered itself: the round reads the event back later, once', async () => {
    const { repo, cache, feed, relay, clock, shardOf } = setup();
    const link = aLink('b1', { version: 4 });
    await repo.insert({ ...link, version: 3 });
    await shardOf('b1').replace(link, 3);
    const holds = jest.spyOn(cache, 'holds');
    expect(await relay.deliverNow([editedEvent(link)])).toBe(true);
    expect(feed.published).toEqual([{ domain: 'sho.rt', code: 'b1', version: 4 }]);
    await relay.round(); // reads both events; the create's is due (no request delivered it), the edit's waits for its read-back
    expect(feed.published).toEqual([{ domain: 'sho.rt', code: 'b1', version: 4 }]);
    expect(holds).not.toHaveBeenCalled();
    clock.t += CONFIRM;
    await relay.round();
    expect(holds).toHaveBeenCalledTimes(1);
    expect(repo.outboxEvents()).toEqual([]);
    expect(feed.published).toHaveLength(1);
  });

  it('delivers again an acknowledged write the cache lost (a Redis master that took it and then lost its role), and tells every instance again', async () => {
    const { repo, cache, feed, relay, clock } = setup();
    const link = aLink('c1');
    await repo.insert(link);
    await relay.round();
    clock.t += CONFIRM;
    await relay.round();
    await repo.remove(link, 1, new Date(clock.t + 86_400_000));
    cache.values.set('sho.rt/c1', link); // a redirect's read-through before the delete
    cache.losing = true;
    expect(await relay.deliverNow([deletedEvent(link)])).toBe(true);
    cache.losing = false;
    expect(cache.values.get('sho.rt/c1')).toEqual(link);
    await relay.round();
    clock.t += CONFIRM;
    await relay.round();
    expect(cache.values.get('sho.rt/c1')).toEqual({ gone: true, version: 2 });
    expect(feed.published).toEqual([
      { domain: 'sho.rt', code: 'c1', version: 2 },
      { domain: 'sho.rt', code: 'c1', version: 2 },
    ]);
    expect(relay.counts.redelivered).toBe(1);
    expect(repo.outboxEvents()).toHaveLength(1); // delivered again: read back once more before it goes
    clock.t += CONFIRM;
    await relay.round();
    expect(repo.outboxEvents()).toEqual([]);
    expect(feed.published).toHaveLength(2);
  });

  it('reads an edit back, and writes the link as its shard holds it now when the cache lost it', async () => {
    const { repo, cache, feed, relay, clock, shardOf } = setup();
    const link = aLink('d1');
    await repo.insert(link);
    const edited = { ...link, targetUrl: 'https://example.com/edited', version: 2 };
    await shardOf('d1').replace(edited, 1);
    cache.losing = true;
    await relay.deliverNow([createdEvent(link), editedEvent(edited)]);
    cache.losing = false;
    await relay.round();
    clock.t += CONFIRM;
    await relay.round();
    expect(cache.values.get('sho.rt/d1')).toMatchObject({ targetUrl: 'https://example.com/edited', version: 2 });
    expect(feed.published.map((c) => c.version)).toEqual([2, 2]);
    expect(cache.newLinks).toEqual([{ domain: 'sho.rt', code: 'd1' }]); // a create's marks are written again blindly
  });

  it('takes over the events of a relay that crashed once their lease ran out, not before, and delivers each once', async () => {
    const { repo, cache, feed, clock, relayAs } = setup('gen-crashed');
    const links = ['e1', 'e2', 'e3', 'e4'].map((code) => aLink(code));
    for (const l of links) await repo.insert(l);
    await repo.remove(links[0], 1, new Date(clock.t + 86_400_000));
    // gen-crashed wrote these and died before its relay ran: two others share the shards.
    const b = relayAs('gen-b');
    const c = relayAs('gen-c');
    await Promise.all([b.round(), c.round()]);
    expect(cache.newLinks).toEqual([]);
    clock.t += LEASE;
    await Promise.all([b.round(), c.round()]);
    expect(b.counts.claimed + c.counts.claimed).toBe(5);
    expect(cache.newLinks.map((l) => l.code).sort()).toEqual(['e1', 'e2', 'e3', 'e4']);
    expect(feed.published).toEqual([{ domain: 'sho.rt', code: 'e1', version: 2 }]);
    expect(cache.values.get('sho.rt/e1')).toEqual({ gone: true, version: 2 });
    clock.t += CONFIRM;
    await Promise.all([b.round(), c.round()]);
    expect(repo.outboxEvents()).toEqual([]);
  });

  it('keeps the events it holds leased while it works on them, and hands them back when it stops', async () => {
    const { repo, cache, clock, relay, relayAs } = setup();
    await repo.insert(aLink('f1'));
    cache.down = true;
    const other = relayAs('gen-other');
    for (let i = 0; i < 30; i++) {
      clock.t += 1000;
      await relay.round();
      await other.round();
    }
    expect(other.counts.claimed).toBe(0); // renewed every third of a lease
    expect(relay.pending().events).toBe(1);
    await relay.stop();
    cache.down = false;
    await other.round();
    expect(other.counts.claimed).toBe(1);
    expect(cache.newLinks).toEqual([{ domain: 'sho.rt', code: 'f1' }]);
  });

  it('renews only the events it has read: the backlog beyond what it holds keeps its first lease, and another relay takes that over', async () => {
    const { repo, cache, feed, clock, relayAs } = setup();
    for (let i = 0; i < 8; i++) await repo.insert(aLink(`h${i}`));
    cache.down = true;
    // Holds two events per shard at most, as a relay behind a batch of millions holds OUTBOX maxTracked.
    const relay = relayAs('gen-a', [new CacheEventConsumer(cache, feed, repo)], { maxTracked: 2, batch: 2 });
    for (let i = 0; i < 15; i++) {
      clock.t += 1000;
      await relay.round();
    }
    const held = relay.pending().events;
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThanOrEqual(4);
    const other = relayAs('gen-other');
    await other.round();
    // Before, a renewal leased every event of the owner, read or not: the other relay took none.
    expect(other.counts.claimed).toBe(8 - held);
    expect(relay.pending().events).toBe(held);
  });

  it('runs passes back to back while batches come full: a backlog drains faster than one batch a round', async () => {
    const { repo, cache, feed, clock, relayAs } = setup();
    for (let i = 0; i < 10; i++) await repo.insert(aLink(`k${i}`));
    const relay = relayAs('gen-a', [new CacheEventConsumer(cache, feed, repo)], { batch: 2 });
    await relay.round();
    expect(relay.counts.delivered).toBe(10); // one pass a round delivered 2
    clock.t += CONFIRM;
    await relay.round();
    expect(relay.counts.settled).toBe(10);
    expect(repo.outboxEvents()).toEqual([]);
  });

  it('applies a link’s events by version: several waiting at once leave the newest state, and a delete outranks the edits before it', async () => {
    const { repo, cache, feed, relay, shardOf } = setup();
    const link = aLink('g1');
    await repo.insert(link);
    for (let v = 2; v <= 4; v++) await shardOf('g1').replace({ ...link, title: `v${v}`, version: v }, v - 1);
    await repo.remove(link, 4, new Date(2e12));
    cache.down = true;
    await relay.round();
    cache.down = false;
    await relay.round();
    expect(cache.values.get('sho.rt/g1')).toEqual({ gone: true, version: 5 });
    expect(feed.published).toEqual([{ domain: 'sho.rt', code: 'g1', version: 5 }]);
  });

  it('goes on with the other shards while one is down, and delivers the down shard’s events once it is back', async () => {
    const { repo, cache, relay } = setup();
    const codes = Array.from({ length: 40 }, (_, i) => `h${i}`);
    for (const code of codes) await repo.insert(aLink(code));
    const down = repo.shardOf('h0');
    repo.down.add(down);
    await relay.round();
    expect(cache.newLinks.map((l) => l.code).sort()).toEqual(codes.filter((c) => repo.shardOf(c) !== down).sort());
    repo.down.delete(down);
    await relay.round();
    expect(cache.newLinks.map((l) => l.code).sort()).toEqual([...codes].sort());
  });

  it('waits for every consumer: an event leaves the outbox once each has it, and a consumer that failed gets it again alone', async () => {
    const { repo, relayAs, clock } = setup();
    const got: Record<string, LinkChangeEvent[]> = { audit: [], hooks: [] };
    let hooksDown = true;
    const consumer = (name: 'audit' | 'hooks'): LinkEventConsumer => ({
      name,
      deliver: async (events) => {
        if (name === 'hooks' && hooksDown) return events;
        got[name].push(...events);
        return [];
      },
    });
    const relay = relayAs('gen-a', [consumer('audit'), consumer('hooks')]);
    await repo.insert(aLink('i1'));
    await relay.round();
    expect(got.audit.map((e) => e.code)).toEqual(['i1']);
    expect(repo.outboxEvents()).toHaveLength(1);
    hooksDown = false;
    clock.t += 1000;
    await relay.round();
    expect(got.audit).toHaveLength(1);
    expect(got.hooks.map((e) => e.code)).toEqual(['i1']);
    expect(repo.outboxEvents()).toEqual([]);
  });
});
