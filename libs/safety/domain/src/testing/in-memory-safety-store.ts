import type { ReputationVerdict } from '@shortlink/url-policy';
import { urlHashOf } from '../health';
import { AbuseReport, BrokenLinkSettings, CheckRecord, IndexedLink, LinkRef, QueueItem, QueuePosition, QueueState, SafetyStore, TargetRecord } from '../ports';

const byLinkId = (a: { linkId: string }, b: { linkId: string }) => (BigInt(a.linkId) < BigInt(b.linkId) ? -1 : BigInt(a.linkId) > BigInt(b.linkId) ? 1 : 0);
const after = (id: string, position: string | null) => position === null || BigInt(id) > BigInt(position);
const ref = (l: LinkRef): LinkRef => ({ linkId: l.linkId, domain: l.domain, code: l.code, tenantId: l.tenantId });

/**
 * The safety tables in Maps, for unit tests: the same rules as the SQL stores (held by the contract
 * suite in libs/links/store/src/contract/safety-store.contract.ts).
 */
export class InMemorySafetyStore implements SafetyStore {
  /** link id -> its targets (url hash -> host) and the link. */
  readonly links = new Map<string, { ref: LinkRef; targets: Map<string, string> }>();
  readonly targets = new Map<string, TargetRecord>();
  readonly reports = new Map<string, AbuseReport & { relayed: boolean }>();
  readonly queue = new Map<string, QueueItem>();
  readonly settings = new Map<string, BrokenLinkSettings>();
  readonly feeds = new Map<string, string>();
  readonly leases = new Map<string, { owner: string; until: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async index(links: readonly IndexedLink[], now: Date): Promise<void> {
    for (const link of links) {
      const targets = new Map<string, string>();
      for (const t of link.targets) {
        const hash = urlHashOf(t.url);
        targets.set(hash, t.host);
        if (!this.targets.has(hash))
          this.targets.set(hash, {
            urlHash: hash,
            url: t.url,
            host: t.host,
            state: 'unchecked',
            since: null,
            lastStatus: null,
            lastError: null,
            checkedAt: null,
            failures: 0,
            nextCheckAt: now,
          });
      }
      this.links.set(link.linkId, { ref: ref(link), targets });
    }
  }

  async unindex(linkIds: readonly string[]): Promise<void> {
    for (const id of linkIds) this.links.delete(id);
  }

  async linksOnHosts(hosts: { covering: readonly string[]; exact: readonly string[] }, position: string | null, limit: number): Promise<LinkRef[]> {
    const matches = (host: string) => hosts.exact.includes(host) || hosts.covering.some((c) => host === c || host.endsWith(`.${c}`));
    return [...this.links.values()]
      .filter((l) => after(l.ref.linkId, position) && [...l.targets.values()].some(matches))
      .map((l) => l.ref)
      .sort(byLinkId)
      .slice(0, limit);
  }

  async linksOfTarget(urlHash: string, position: string | null, limit: number): Promise<LinkRef[]> {
    return [...this.links.values()]
      .filter((l) => after(l.ref.linkId, position) && l.targets.has(urlHash))
      .map((l) => l.ref)
      .sort(byLinkId)
      .slice(0, limit);
  }

  async targetsOfLinks(linkIds: readonly string[]): Promise<Array<{ linkId: string; target: TargetRecord }>> {
    return linkIds.flatMap((linkId) =>
      [...(this.links.get(linkId)?.targets.keys() ?? [])].flatMap((h) => (this.targets.has(h) ? [{ linkId, target: this.targets.get(h)! }] : [])),
    );
  }

  async dueTargets(now: Date, limit: number): Promise<TargetRecord[]> {
    return [...this.targets.values()]
      .filter((t) => t.nextCheckAt <= now)
      .sort((a, b) => a.nextCheckAt.getTime() - b.nextCheckAt.getTime() || (a.urlHash < b.urlHash ? -1 : 1))
      .slice(0, limit);
  }

  async recordCheck(urlHash: string, check: CheckRecord): Promise<void> {
    const target = this.targets.get(urlHash);
    if (target) this.targets.set(urlHash, { ...target, ...check });
  }

  async postpone(urlHashes: readonly string[], until: Date): Promise<void> {
    for (const h of urlHashes) {
      const target = this.targets.get(h);
      if (target) this.targets.set(h, { ...target, nextCheckAt: until });
    }
  }

  async dropUnused(limit: number): Promise<number> {
    const used = new Set([...this.links.values()].flatMap((l) => [...l.targets.keys()]));
    const unused = [...this.targets.keys()].filter((h) => !used.has(h)).slice(0, limit);
    for (const h of unused) this.targets.delete(h);
    return unused.length;
  }

  async addReport(report: AbuseReport): Promise<boolean> {
    if ([...this.reports.values()].some((r) => r.linkId === report.linkId && r.reporter === report.reporter)) return false;
    this.reports.set(report.id, { ...report, relayed: false });
    return true;
  }

  async unrelayedReports(limit: number): Promise<AbuseReport[]> {
    return [...this.reports.values()]
      .filter((r) => !r.relayed)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
      .slice(0, limit)
      .map(({ relayed: _relayed, ...r }) => r);
  }

  async markRelayed(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      const r = this.reports.get(id);
      if (r) this.reports.set(id, { ...r, relayed: true });
    }
  }

  async reportsOf(linkId: string, limit: number): Promise<AbuseReport[]> {
    return [...this.reports.values()]
      .filter((r) => r.linkId === linkId)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
      .slice(0, limit)
      .map(({ relayed: _relayed, ...r }) => r);
  }

  async noteReports(link: LinkRef, count: number, at: Date): Promise<void> {
    const item = this.opened(link, at);
    this.queue.set(link.linkId, { ...item, reports: item.reports + count, lastReportAt: at });
  }

  async noteHit(link: LinkRef, hit: ReputationVerdict, at: Date): Promise<void> {
    const item = this.opened(link, at);
    this.queue.set(link.linkId, { ...item, hit: { state: hit.state, reason: hit.reason, source: hit.source, at } });
  }

  async listQueue(state: QueueState, position: QueuePosition | null, limit: number): Promise<QueueItem[]> {
    return [...this.queue.values()]
      .filter((i) => i.state === state)
      .filter(
        (i) =>
          position === null ||
          i.updatedAt.getTime() < position.updatedAt.getTime() ||
          (i.updatedAt.getTime() === position.updatedAt.getTime() && BigInt(i.linkId) < BigInt(position.linkId)),
      )
      .sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime() || -byLinkId(a, b))
      .slice(0, limit);
  }

  async queueItem(linkId: string): Promise<QueueItem | null> {
    return this.queue.get(linkId) ?? null;
  }

  async resolve(link: LinkRef, resolution: NonNullable<QueueItem['resolution']>): Promise<void> {
    const item = this.queue.get(link.linkId) ?? this.fresh(link, resolution.at);
    this.queue.set(link.linkId, { ...item, state: 'resolved', resolution, updatedAt: resolution.at });
  }

  async brokenLinkSettings(tenantId: string): Promise<BrokenLinkSettings | null> {
    return this.settings.get(tenantId) ?? null;
  }

  async saveBrokenLinkSettings(tenantId: string, settings: BrokenLinkSettings, expectedVersion: number): Promise<boolean> {
    if ((this.settings.get(tenantId)?.version ?? 0) !== expectedVersion) return false;
    this.settings.set(tenantId, settings);
    return true;
  }

  async allBrokenLinkSettings(): Promise<Array<{ tenantId: string; settings: BrokenLinkSettings }>> {
    return [...this.settings].filter(([, s]) => s.mode !== 'target').map(([tenantId, settings]) => ({ tenantId, settings }));
  }

  async feedDigest(name: string): Promise<string | null> {
    return this.feeds.get(name) ?? null;
  }

  async saveFeedDigest(name: string, digest: string): Promise<void> {
    this.feeds.set(name, digest);
  }

  async claimLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    const now = this.now();
    const held = this.leases.get(name);
    if (held && held.owner !== owner && held.until > now) return false;
    this.leases.set(name, { owner, until: now + ttlMs });
    return true;
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    if (this.leases.get(name)?.owner === owner) this.leases.delete(name);
  }

  private fresh(link: LinkRef, at: Date): QueueItem {
    return { ...ref(link), state: 'open', reports: 0, lastReportAt: null, hit: null, openedAt: at, updatedAt: at, resolution: null };
  }

  /** The link's item, open (a resolved one opens again, its counts start over). */
  private opened(link: LinkRef, at: Date): QueueItem {
    const item = this.queue.get(link.linkId);
    if (!item || item.state === 'resolved') return this.fresh(link, at);
    return { ...item, updatedAt: at };
  }
}
