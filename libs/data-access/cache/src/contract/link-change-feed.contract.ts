import { randomUUID } from 'crypto';
import { domainSettingsChange, isDomainSettingsChange, LinkChange, LinkChangeFeed } from '@shortlink/links-domain';

/** One behaviour, both channels: the in-process emitter in unit runs, Redis pub/sub in integration runs. */
export function describeLinkChangeFeedContract(backend: string, open: () => Promise<LinkChangeFeed>) {
  describe(`link change feed contract: ${backend}`, () => {
    let feed: LinkChangeFeed;
    beforeAll(async () => {
      feed = await open();
    });
    afterAll(() => feed?.close());

    const until = async (check: () => boolean, ms = 5000) => {
      const deadline = Date.now() + ms;
      while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      return check();
    };

    it('delivers every published change to every subscriber, with domain, code and version (in any order: a cluster spreads PUBLISH over its nodes)', async () => {
      const a: LinkChange[] = [];
      const b: LinkChange[] = [];
      const offA = await feed.subscribe(
        (c) => a.push(c),
        () => undefined,
      );
      const offB = await feed.subscribe(
        (c) => b.push(c),
        () => undefined,
      );
      const domain = `feed-${randomUUID().slice(0, 8)}.example`;
      const sent = Array.from({ length: 20 }, (_, i) => ({ domain, code: `c${i}-Ab_9`, version: i + 1 }));
      for (const c of sent) await feed.publish(c);
      expect(await until(() => a.filter((c) => c.domain === domain).length === 20 && b.filter((c) => c.domain === domain).length === 20)).toBe(true);
      const byVersion = (list: LinkChange[]) => list.filter((c) => c.domain === domain).sort((x, y) => x.version - y.version);
      expect(byVersion(a)).toEqual(sent);
      expect(byVersion(b)).toEqual(sent);
      await offA();
      await feed.publish({ domain, code: 'after', version: 99 });
      expect(await until(() => b.some((c) => c.code === 'after'))).toBe(true);
      expect(a.some((c) => c.code === 'after')).toBe(false);
      await offB();
    });

    it('carries a change of a domain’s settings (no code) like a link change', async () => {
      const got: LinkChange[] = [];
      const off = await feed.subscribe(
        (c) => got.push(c),
        () => undefined,
      );
      const domain = `settings-${randomUUID().slice(0, 8)}.example`;
      await feed.publish(domainSettingsChange(domain, 3));
      expect(await until(() => got.some((c) => c.domain === domain))).toBe(true);
      expect(got.filter((c) => c.domain === domain)).toEqual([{ domain, code: '', version: 3 }]);
      expect(isDomainSettingsChange(got.find((c) => c.domain === domain)!)).toBe(true);
      await off();
    });
  });
}
