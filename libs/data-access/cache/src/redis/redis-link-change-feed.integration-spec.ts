import { Redis } from 'ioredis';
import { LinkChange } from '@shortlink/links-domain';
import { redisClusterNodes } from '@shortlink/testing';
import { describeLinkChangeFeedContract } from '../contract/link-change-feed.contract';
import { RedisLinkChangeFeed } from './redis-link-change-feed';

// Runs against the Redis Cluster of `npm run stack:up` (deploy/local/.run/stack.env).
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
  const until = async (check: () => boolean, ms = 10_000) => {
    const deadline = Date.now() + ms;
    while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return check();
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
