import { domainSettingsChange, LinkChange, LinkChangeFeed } from '@shortlink/links-domain';
import { RedirectPipeline } from '@shortlink/read-path';
import { MemoryLinkChangeFeed } from '@shortlink/cache';
import { LinkChangeListener } from './link-changes';

/** Records what the listener asks of the read path. */
const fakePipeline = () => {
  const calls: string[] = [];
  const pipeline = {
    applyChange: (c: LinkChange) => void calls.push(`change ${c.code}@${c.version}`),
    dropLocalLinks: () => void calls.push('drop all'),
  } as unknown as RedirectPipeline;
  return { calls, pipeline };
};
const counts = () => ({ applied: 0, gaps: 0, observer: { applied() {}, gap() {} } });

/** Lines nobody reads. */
const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

describe('LinkChangeListener', () => {
  it('tells the domains of every change and every gap; a change of settings (no code) leaves L1 alone', async () => {
    const feed = new MemoryLinkChangeFeed();
    const { calls, pipeline } = fakePipeline();
    const told: string[] = [];
    const domains = {
      changed: async (c: LinkChange) => void told.push(`${c.domain}/${c.code}@${c.version}`),
      dropAll: async () => void told.push('drop all'),
    };
    const listener = new LinkChangeListener({ pipeline, feed, observer: counts().observer, logger: quiet, domains });
    await listener.start();
    await feed.publish({ domain: 'sho.rt', code: 'abc1234', version: 2 });
    await feed.publish(domainSettingsChange('go.example', 7));
    listener.gap();
    expect(calls).toEqual(['change abc1234@2', 'drop all']);
    expect(told).toEqual(['sho.rt/abc1234@2', 'go.example/@7', 'drop all']);
    await listener.stop();
  });

  it('applies every published change, lists them newest first with their apply time, and stops listening on stop', async () => {
    const feed = new MemoryLinkChangeFeed();
    const { calls, pipeline } = fakePipeline();
    const listener = new LinkChangeListener({ pipeline, feed, observer: counts().observer, logger: quiet });
    await listener.start();
    const before = Date.now();
    await feed.publish({ domain: 'sho.rt', code: 'abc1234', version: 2 });
    await feed.publish({ domain: 'sho.rt', code: 'xyz9876', version: 5 });
    expect(calls).toEqual(['change abc1234@2', 'change xyz9876@5']);
    const body = (await listener.route()(new URLSearchParams('limit=10'))).body as {
      subscribed: boolean;
      changes: Array<{ code: string; version: number; appliedAtMs: number }>;
    };
    expect(body.subscribed).toBe(true);
    expect(body.changes.map((c) => `${c.code}@${c.version}`)).toEqual(['xyz9876@5', 'abc1234@2']);
    expect(body.changes[0].appliedAtMs).toBeGreaterThanOrEqual(before - 1);
    expect(body.changes[0].appliedAtMs).toBeLessThanOrEqual(Date.now() + 1);
    const one = (await listener.route()(new URLSearchParams('code=abc1234'))).body as { changes: unknown[] };
    expect(one.changes).toHaveLength(1);
    await listener.stop();
    await feed.publish({ domain: 'sho.rt', code: 'late123', version: 1 });
    expect(calls).toHaveLength(2);
  });

  it('empties L1 of links when the channel reports a gap, and once more when a late subscription completes', async () => {
    let gap: () => void = () => undefined;
    let ready: (u: () => Promise<void>) => void = () => undefined;
    const feed: LinkChangeFeed = {
      publish: async () => undefined,
      subscribe: (_onChange, onGap) => {
        gap = onGap;
        return new Promise((resolve) => (ready = resolve));
      },
      heartbeat: async () => undefined,
      close: async () => undefined,
    };
    const { calls, pipeline } = fakePipeline();
    const listener = new LinkChangeListener({ pipeline, feed, observer: counts().observer, logger: quiet });
    await listener.start(20); // the channel does not answer in time: the instance starts anyway
    expect(calls).toEqual([]);
    ready(async () => undefined);
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual(['drop all']);
    gap();
    expect(calls).toEqual(['drop all', 'drop all']);
    expect(((await listener.route()(new URLSearchParams())).body as { gaps: number }).gaps).toBe(2);
  });
});
