import { Clock, systemClock } from '@shortlink/core';
import type { ReputationVerdict } from '@shortlink/url-policy';
import { indexedLinkOf } from './health';
import { SafetyLinks, SafetyNotices } from './notices';
import { IndexedLink, LinkRef, LinkTargetIndex, ModerationQueueStore } from './ports';
import { FeedSet } from './reputation';

/** Hosts per look-up of the index, and links per page of its answer. */
const HOSTS_PER_QUERY = 200;
const LINKS_PER_PAGE = 500;

/**
 * Live links judged again (docs/design.md, "Trust and safety"): the links the index of targets
 * names for some hosts (a feed that changed), each read from its shard and its current targets
 * judged by the feeds in memory. A verdict stronger than the link's moderation is applied like an
 * operator's (LinkService.escalate: every redirect within the edit bound), put in the operators'
 * queue, written to their audit log and told to the tenant (webhook `link.flagged`).
 */
export class LiveRecheck {
  constructor(
    private readonly index: LinkTargetIndex,
    private readonly links: SafetyLinks,
    private readonly feeds: FeedSet,
    private readonly queue: ModerationQueueStore,
    private readonly notices: SafetyNotices,
    private readonly clock: Clock = systemClock,
  ) {}

  /** The links on these hosts (and the subdomains of `covering`), judged again; how many were looked at and how many changed. */
  async hosts(hosts: { readonly covering: readonly string[]; readonly exact: readonly string[] }): Promise<{ links: number; escalated: number }> {
    const counts = { links: 0, escalated: 0 };
    const chunks: Array<{ covering: readonly string[]; exact: readonly string[] }> = [];
    for (let i = 0; i < hosts.covering.length; i += HOSTS_PER_QUERY) chunks.push({ covering: hosts.covering.slice(i, i + HOSTS_PER_QUERY), exact: [] });
    for (let i = 0; i < hosts.exact.length; i += HOSTS_PER_QUERY) chunks.push({ covering: [], exact: hosts.exact.slice(i, i + HOSTS_PER_QUERY) });
    for (const chunk of chunks) {
      let after: string | null = null;
      for (;;) {
        const refs = await this.index.linksOnHosts(chunk, after, LINKS_PER_PAGE);
        for (const ref of refs) {
          counts.links++;
          if (await this.judge(ref)) counts.escalated++;
        }
        if (refs.length < LINKS_PER_PAGE) break;
        after = refs[refs.length - 1].linkId;
      }
    }
    return counts;
  }

  /** One link judged by the feeds; true when its moderation changed. */
  async judge(ref: LinkRef): Promise<boolean> {
    const link = await this.links.find(ref);
    if (!link || link.id !== ref.linkId) return false;
    const verdict = this.feeds.judgeAll(indexedLinkOf(link).targets);
    return verdict !== null && this.apply(ref, verdict);
  }

  /** A link whose targets were just read from its shard (the sweep), judged by the feeds; true when its moderation changed. */
  async judgeIndexed(link: IndexedLink): Promise<boolean> {
    const verdict = this.feeds.judgeAll(link.targets);
    return verdict !== null && this.apply(link, verdict);
  }

  /** A verdict against a link (a feed's, Web Risk's): applied when stronger than what the link has; true when it was. */
  async apply(ref: LinkRef, verdict: ReputationVerdict): Promise<boolean> {
    const change = await this.links.escalate(ref, ref.linkId, verdict);
    if (change === null) return false;
    await this.queue.noteHit(ref, verdict, new Date(this.clock.now()));
    await this.notices.escalated(change, verdict);
    return true;
  }
}
