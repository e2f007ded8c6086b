import type { LinkUpdate } from '@shortlink/links-domain';
import { LinkService, SegmentIdAllocator } from '@shortlink/links-domain';
import { InMemoryLinkRepository, plainPasswords, RecordingChangeFeed, RecordingLinkCache, relayOver } from '@shortlink/links-domain/testing';
import { SequenceCodeStrategy } from '@shortlink/link-codes';
import { ReputationVerdict, TargetReputation, UrlPolicy } from '@shortlink/url-policy';
import { safetyLinksOf, SafetyNotices } from '../notices';
import { AbuseReport } from '../ports';
import { InMemorySafetyStore } from './in-memory-safety-store';

/** What the safety jobs told, in order. */
export class RecordingNotices implements SafetyNotices {
  readonly escalations: Array<{ code: string; verdict: ReputationVerdict; version: number }> = [];
  readonly breaks: Array<{ code: string; targets: readonly string[] }> = [];
  readonly reports: AbuseReport[] = [];

  async escalated(change: LinkUpdate, verdict: ReputationVerdict): Promise<void> {
    this.escalations.push({ code: change.after.code, verdict, version: change.after.version });
  }

  async broken(change: LinkUpdate): Promise<void> {
    this.breaks.push({ code: change.after.code, targets: change.after.health?.brokenTargets ?? [] });
  }

  async reported(report: AbuseReport): Promise<void> {
    this.reports.push(report);
  }
}

/**
 * The links context in memory (LinkService over an in-memory repository), the safety tables in
 * memory and the notices recorded: what the safety domain's specs drive. `now.t` is the clock.
 */
export function safetyWorld(options: { reputation?: TargetReputation } = {}) {
  const now = { t: Date.UTC(2026, 11, 7, 12) };
  const clock = { now: () => now.t };
  const repo = new InMemoryLinkRepository();
  const cache = new RecordingLinkCache();
  const feed = new RecordingChangeFeed();
  let next = 1n;
  const service = new LinkService(
    {
      links: repo,
      ids: new SegmentIdAllocator({ allocateBlock: async (_: string, size: number) => ({ start: next, end: (next += BigInt(size)) }) }, 'links', 10),
      codes: new SequenceCodeStrategy('secret'),
      events: relayOver(repo, cache, feed, { clock }),
      passwords: plainPasswords,
      urls: new UrlPolicy({ shortDomains: ['sho.rt'] }),
      reputation: options.reputation,
      clock,
    },
    { defaultDomain: 'sho.rt', sharedDomains: ['sho.rt'], retireForMs: 1000 },
  );
  const store = new InMemorySafetyStore(clock.now);
  const notices = new RecordingNotices();
  return { now, clock, repo, cache, feed, service, store, notices, links: safetyLinksOf(service, repo) };
}
