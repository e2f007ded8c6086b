import type { ReputationVerdict } from '@shortlink/url-policy';
import { UrlPolicy } from '@shortlink/url-policy';
import { parseFeed } from './feed-formats';
import { RemoteReputation } from './ports';
import { FeedSet, ReputationOptions, ReputationService } from './reputation';
import { ThreatIndex } from './threats';

const policy = new UrlPolicy({ shortDomains: ['sho.rt'] });
const checked = (...urls: string[]) => urls.map((u) => policy.inspect(u));

/** A remote service that knows some URLs; counts its calls; can hang or fail. */
class Remote implements RemoteReputation {
  readonly source = 'web-risk';
  calls: string[] = [];
  hang = false;
  fail = false;
  constructor(private readonly known: Record<string, ReputationVerdict>) {}
  async lookup(url: string) {
    this.calls.push(url);
    if (this.fail) throw new Error('503 from the service');
    if (this.hang) return new Promise<never>(() => undefined);
    return { verdict: this.known[url] ?? null, expiresAt: null };
  }
}

const MALWARE: ReputationVerdict = { state: 'banned', reason: 'Web Risk MALWARE: https://bad.example/x', source: 'web-risk' };

describe('the reputation of targets at create and edit (docs/design.md, "Trust and safety")', () => {
  const setup = (options: Partial<ReputationOptions> = {}) => {
    const now = { t: 1_000_000 };
    const feeds = new FeedSet();
    const remote = new Remote({ 'https://bad.example/x': MALWARE });
    const skipped: string[] = [];
    const service = new ReputationService(
      feeds,
      remote,
      { cacheHosts: 100, missTtlMs: 300_000, remotePerSecond: 10, remoteTimeoutMs: 1000, onRemoteSkipped: (why) => skipped.push(why), ...options },
      { now: () => now.t },
    );
    return { now, feeds, remote, service, skipped };
  };

  it('judges by the feeds in memory first: a ban there asks no remote service', async () => {
    const { feeds, remote, service } = setup();
    feeds.set(0, new ThreatIndex({ format: 'hosts', location: 'x', action: 'flagged' }, parseFeed('hosts', 'ads.example\n')));
    feeds.set(1, new ThreatIndex({ format: 'openphish', location: 'y', action: 'banned' }, parseFeed('openphish', 'https://phish.example/login\n')));
    expect(await service.judge(checked('https://shop.example/', 'https://x.ads.example/'))).toEqual({
      state: 'flagged',
      source: 'feed:hosts',
      reason: 'listed host: https://x.ads.example/',
    });
    expect(await service.judge(checked('https://x.ads.example/', 'https://phish.example/login'))).toMatchObject({ state: 'banned', source: 'feed:openphish' });
    expect(remote.calls).not.toContain('https://phish.example/login');
  });

  it('asks the remote service once per URL while its answer holds, keeping answers per host', async () => {
    const { remote, service, now } = setup({ missTtlMs: 60_000 });
    expect(await service.judge(checked('https://bad.example/x', 'https://good.example/'))).toEqual(MALWARE);
    expect(await service.judge(checked('https://good.example/'))).toBeNull();
    expect(remote.calls).toEqual(['https://bad.example/x', 'https://good.example/']);
    now.t += 60_001;
    await service.judge(checked('https://good.example/'));
    expect(remote.calls).toHaveLength(3);
    // A feed that changed a host drops what the cache knew of it.
    service.forgetHosts(['bad.example']);
    await service.judge(checked('https://bad.example/x'));
    expect(remote.calls).toHaveLength(4);
  });

  it('fails open, counted, when the remote service is over budget, fails or is slow (the scheduled checks screen again)', async () => {
    jest.useFakeTimers();
    try {
      const { remote, service, skipped } = setup({ remotePerSecond: 1 });
      expect(await service.judge(checked('https://a.example/'))).toBeNull();
      expect(await service.judge(checked('https://b.example/'))).toBeNull();
      expect(skipped).toEqual(['budget']);
      expect(remote.calls).toEqual(['https://a.example/']);
      const { remote: failing, service: s2, skipped: k2 } = setup();
      failing.fail = true;
      expect(await s2.judge(checked('https://bad.example/x'))).toBeNull();
      expect(k2).toEqual(['error']);
      const { remote: slow, service: s3, skipped: k3 } = setup({ remoteTimeoutMs: 500 });
      slow.hang = true;
      const judged = s3.judge(checked('https://bad.example/x'));
      await jest.advanceTimersByTimeAsync(500);
      expect(await judged).toBeNull();
      expect(k3).toEqual(['timeout']);
    } finally {
      jest.useRealTimers();
    }
  });
});
