import { Redis } from 'ioredis';
import { LinkChange } from '@shortlink/links-domain';
import { redisClusterNodes } from '@shortlink/testing';
import { describeLinkChangeFeedContract } from '../contract/link-change-feed.contract';
import { RedisLinkChangeFeed } from './redis-link-change-feed';

// Runs against the Redis Cluster of `npm run stack:up` (deploy/local/.run/stack.env).

const until = async (check: () => boolean, ms = 10_000) => {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return check();
};
describeLinkChangeFeedContract('redis pub/sub', async () => new RedisLinkChangeFeed({ nodes: redisClusterNodes() }));

describe('redis pub/sub link change feed: interruptions', () => {
  /** Kills this process's named subscriber connections on every node; returns how many. */
  const killSubscribers = async (): Promise<number> => {
    let killed = 0;
    for (const { host, port } of redisClusterNodes()) {
      const r = new Redis({ host, port, lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await r.connect();
        const list = String(await r.call('CLIENT', 'LIST', 'TYPE', 'pubsub'));
        for (const line of list.split('\n').filter((l) => new RegExp(`\\sname=\\S*shortlink-link-changes-${process.pid}\\s`).test(l))) {
          killed += Number(await r.call('CLIENT', 'KILL', 'ID', /(?:^|\s)id=(\d+)/.exec(line)![1]));
        }
      } finally {
        r.disconnect();
      }
    }
    return killed;
  };

  it('reports a gap when the subscription is cut, and delivers again once it is back', async () => {
    const feed = new RedisLinkChangeFeed({ nodes: redisClusterNodes() });
    try {
      const seen: LinkChange[] = [];
      let gaps = 0;
      const off = await feed.subscribe(
        (c) => seen.push(c),
        () => gaps++,
      );
      expect(await killSubscribers()).toBeGreaterThanOrEqual(1); // ours, and any of this process the server has not reaped yet
      expect(await until(() => gaps === 1)).toBe(true);
      const domain = `gap-${Date.now().toString(36)}.example`;
      await feed.publish({ domain, code: 'back123', version: 2 });
      expect(await until(() => seen.some((c) => c.domain === domain))).toBe(true);
      await off();
    } finally {
      await feed.close();
    }
  });
});

/**
 * Messages a cluster loses without closing anything (a node that hangs loses its cluster-bus links):
 * publishers number their messages and beat every second, so a subscriber notices (docs/design.md,
 * "Edits reach every instance"). On a channel of their own: the stack's apps beat on the real one.
 */
describe('redis pub/sub link change feed: numbered messages and heartbeats', () => {
  const channel = () => `short:test:link-changes:${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

  it('reports a gap when a number of a publisher never arrives, and still applies what did', async () => {
    const name = channel();
    const feed = new RedisLinkChangeFeed({ nodes: redisClusterNodes(), channel: name, reorderMs: 300, silenceMs: 60_000 });
    const raw = new Redis(redisClusterNodes()[0]);
    try {
      const seen: LinkChange[] = [];
      let gaps = 0;
      const off = await feed.subscribe(
        (c) => seen.push(c),
        () => gaps++,
      );
      await raw.publish(name, 'hb\u0000\u0000\u0000gen-x\u00001');
      await raw.publish(name, '2\u0000numbered.example\u0000abc1234\u0000gen-x\u00002');
      await raw.publish(name, '3\u0000numbered.example\u0000abc1234\u0000gen-x\u00004'); // 3 lost on the way
      expect(await until(() => seen.length === 2)).toBe(true);
      expect(await until(() => gaps === 1, 3000)).toBe(true);
      expect(seen.map((c) => c.version)).toEqual([2, 3]);
      await raw.publish(name, 'hb\u0000\u0000\u0000gen-x\u00005');
      await new Promise((r) => setTimeout(r, 800));
      expect(gaps).toBe(1);
      await off();
    } finally {
      raw.disconnect();
      await feed.close();
    }
  });

  it('subscribes again and reports a gap when it hears no publisher for a silence, and counts a publisher’s own messages without a gap', async () => {
    const name = channel();
    const subscriber = new RedisLinkChangeFeed({ nodes: redisClusterNodes(), channel: name, reorderMs: 300, silenceMs: 1000 });
    const publisher = new RedisLinkChangeFeed({ nodes: redisClusterNodes(), channel: name });
    try {
      const seen: LinkChange[] = [];
      let gaps = 0;
      const off = await subscriber.subscribe(
        (c) => seen.push(c),
        () => gaps++,
      );
      for (let i = 0; i < 10; i++) {
        await publisher.heartbeat();
        if (i % 3 === 0) await publisher.publish({ domain: 'beating.example', code: `c${i}`, version: i + 1 });
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(seen.map((c) => c.code)).toEqual(['c0', 'c3', 'c6', 'c9']);
      expect(gaps).toBe(0);
      // The publisher stops: the subscriber hears nobody, takes another node, and says it may have missed changes.
      expect(await until(() => gaps === 1, 5000)).toBe(true);
      await off();
    } finally {
      await publisher.close();
      await subscriber.close();
    }
  });
});
