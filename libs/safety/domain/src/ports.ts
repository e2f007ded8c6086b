import type { ReputationVerdict } from '@shortlink/url-policy';

/** A link as the safety index knows it: enough to find it again on its shard and to tell its tenant. */
export interface LinkRef {
  readonly linkId: string;
  readonly domain: string;
  readonly code: string;
  readonly tenantId: string;
}

/** One target of a link as the index keeps it (normalised by the URL policy when it was set). */
export interface IndexedTarget {
  readonly url: string;
  readonly host: string;
}

export interface IndexedLink extends LinkRef {
  readonly targets: readonly IndexedTarget[];
}

/** What the dead-link checks know of one target URL (shared by every link that sends visitors there). */
export type TargetState = 'unchecked' | 'ok' | 'broken';

export interface TargetRecord {
  /** sha256 of the URL, 32 hex characters: the key of the target. */
  readonly urlHash: string;
  readonly url: string;
  readonly host: string;
  readonly state: TargetState;
  /** When the target entered its state; null while unchecked. */
  readonly since: Date | null;
  readonly lastStatus: number | null;
  readonly lastError: string | null;
  readonly checkedAt: Date | null;
  /** Failed checks in a row (a target turns broken after LINK_CHECK_FAILURES_TO_BREAK of them). */
  readonly failures: number;
  readonly nextCheckAt: Date;
}

/** What one check of a target leaves: its new state and when it is due again. */
export type CheckRecord = Omit<TargetRecord, 'urlHash' | 'url' | 'host'>;

/**
 * The index of link targets by host and by URL (docs/design.md, "Trust and safety"): how a feed
 * that changed finds the live links it concerns, and what the dead-link checks work through. Kept
 * from LinkService's changes as they happen and reconciled by a sweep over every shard.
 */
export interface LinkTargetIndex {
  /** Each link's targets become exactly these; a target new to the index is due for its first check at `now`. */
  index(links: readonly IndexedLink[], now: Date): Promise<void>;
  unindex(linkIds: readonly string[]): Promise<void>;
  /**
   * Links with a target on one of `exact` or on one of `covering` or a subdomain of it, in link id
   * order after `after`, at most `limit`, each once. At most 500 hosts per call.
   */
  linksOnHosts(hosts: { readonly covering: readonly string[]; readonly exact: readonly string[] }, after: string | null, limit: number): Promise<LinkRef[]>;
  /** Links that send visitors to the target `urlHash`, in link id order after `after`. */
  linksOfTarget(urlHash: string, after: string | null, limit: number): Promise<LinkRef[]>;
  /** The targets of these links, with what the checks know of each. */
  targetsOfLinks(linkIds: readonly string[]): Promise<Array<{ readonly linkId: string; readonly target: TargetRecord }>>;
  /** Targets whose check is due at `now`, the most overdue first. */
  dueTargets(now: Date, limit: number): Promise<TargetRecord[]>;
  recordCheck(urlHash: string, check: CheckRecord): Promise<void>;
  /** Moves the next check of these targets to `until` (a host that asked us to wait). */
  postpone(urlHashes: readonly string[], until: Date): Promise<void>;
  /** Deletes the targets no link sends visitors to any more; how many. */
  dropUnused(limit: number): Promise<number>;
}

export const REPORT_REASONS = ['phishing', 'malware', 'spam', 'scam', 'illegal', 'other'] as const;
export type ReportReason = (typeof REPORT_REASONS)[number];

/** A visitor's report of a link from the preview or warning page (no account). */
export interface AbuseReport extends LinkRef {
  readonly id: string;
  readonly reason: ReportReason;
  readonly details: string | null;
  /** A keyed hash of the visitor's address (the address itself is never stored): one report per visitor and link. */
  readonly reporter: string;
  readonly createdAt: Date;
}

export interface ReportStore {
  /** False when this reporter already reported this link (nothing stored). */
  addReport(report: AbuseReport): Promise<boolean>;
  /** Reports not yet in the tenant's audit log and the operators' queue, oldest first. */
  unrelayedReports(limit: number): Promise<AbuseReport[]>;
  markRelayed(ids: readonly string[]): Promise<void>;
  /** A link's reports, newest first. */
  reportsOf(linkId: string, limit: number): Promise<AbuseReport[]>;
}

export type QueueState = 'open' | 'resolved';
export const MODERATION_ACTIONS = ['clear', 'flag', 'ban', 'suspend-tenant'] as const;
export type ModerationAction = (typeof MODERATION_ACTIONS)[number];

/** A link in the operators' moderation queue: why it is there, and what was done. */
export interface QueueItem extends LinkRef {
  readonly state: QueueState;
  readonly reports: number;
  readonly lastReportAt: Date | null;
  /** The last feed (or Web Risk) verdict against the link. */
  readonly hit: (ReputationVerdict & { readonly at: Date }) | null;
  readonly openedAt: Date;
  readonly updatedAt: Date;
  readonly resolution: { readonly action: ModerationAction; readonly reason: string | null; readonly by: string; readonly at: Date } | null;
}

/** Where a page of the queue goes on from: the last item shown (most recently updated first). */
export interface QueuePosition {
  readonly updatedAt: Date;
  readonly linkId: string;
}

export interface ModerationQueueStore {
  /** `count` more reports of the link: the item is opened (again, if it was resolved). */
  noteReports(link: LinkRef, count: number, at: Date): Promise<void>;
  /** A verdict against the link: the item is opened (again, if it was resolved). */
  noteHit(link: LinkRef, hit: ReputationVerdict, at: Date): Promise<void>;
  listQueue(state: QueueState, after: QueuePosition | null, limit: number): Promise<QueueItem[]>;
  queueItem(linkId: string): Promise<QueueItem | null>;
  /** Closes the item with what was done; a link with no item gets one, closed. */
  resolve(link: LinkRef, resolution: NonNullable<QueueItem['resolution']>): Promise<void>;
}

/** Where a tenant sends visitors of a link the checks found broken (docs/design.md, "Trust and safety"). */
export type BrokenLinkMode = 'target' | 'page' | 'url';

export interface BrokenLinkSettings {
  /** `target`: to the target all the same (the default); `page`: a page saying so, with a way on; `url`: to `url`. */
  readonly mode: BrokenLinkMode;
  readonly url: string | null;
  readonly version: number;
  readonly updatedAt: Date | null;
}

export interface SafetySettingsStore {
  brokenLinkSettings(tenantId: string): Promise<BrokenLinkSettings | null>;
  /** Writes the settings at `settings.version` if the stored ones are at `expectedVersion` (0: none stored); false otherwise. */
  saveBrokenLinkSettings(tenantId: string, settings: BrokenLinkSettings, expectedVersion: number): Promise<boolean>;
  /** Every tenant's settings that are not the default (the redirect holds them in memory). */
  allBrokenLinkSettings(): Promise<Array<{ readonly tenantId: string; readonly settings: BrokenLinkSettings }>>;
}

export interface FeedStateStore {
  /** The digest of a feed's entries when its live links were last checked against them; null: never. */
  feedDigest(name: string): Promise<string | null>;
  saveFeedDigest(name: string, digest: string, entries: number, at: Date): Promise<void>;
}

export interface LeaseStore {
  /** Takes the lease `name` for `owner` until `ttlMs` from now, or renews it; false while another owner holds it. */
  claimLease(name: string, owner: string, ttlMs: number): Promise<boolean>;
  releaseLease(name: string, owner: string): Promise<void>;
}

/** Everything the safety context keeps, in the meta database. */
export interface SafetyStore extends LinkTargetIndex, ReportStore, ModerationQueueStore, SafetySettingsStore, FeedStateStore, LeaseStore {}

/** SafetyStore: the meta database's safety tables. */
export const SAFETY_STORE = Symbol('SAFETY_STORE');

/**
 * Text of a feed at a location (a file, or an http(s) URL through the pinned client), with what
 * lets the next read skip an unchanged one (ETag, Last-Modified, a file's size and time).
 */
export interface FeedReader {
  read(location: string, previous: FeedValidator | null): Promise<{ readonly text: string; readonly validator: FeedValidator } | 'unchanged'>;
}
export type FeedValidator = Readonly<Record<string, string>>;
export const FEED_READER = Symbol('FEED_READER');

/** A reputation service asked over the network for one URL at a time (Google Web Risk `uris.search`). */
export interface RemoteReputation {
  readonly source: string;
  /** The verdict on a URL and until when it holds; throws when the service cannot answer. */
  lookup(url: string): Promise<{ readonly verdict: ReputationVerdict | null; readonly expiresAt: number | null }>;
}
/** RemoteReputation, or null when none is configured. */
export const REMOTE_REPUTATION = Symbol('REMOTE_REPUTATION');

/** One HTTP answer of a target (its body is not read beyond a few kilobytes). */
export interface ProbeAnswer {
  readonly status: number;
  readonly location: string | null;
  readonly retryAfter: string | null;
}

/**
 * The requests of the dead-link checks: to an address the guard resolved and checked (public only,
 * unless configured), never following redirects itself. Throws a ProbeFailure.
 */
export interface TargetHttp {
  request(url: string, method: 'HEAD' | 'GET'): Promise<ProbeAnswer>;
}
export const TARGET_HTTP = Symbol('TARGET_HTTP');

/** Why a request of a check got no answer: stable words shown to the tenant as the target's `lastError`. */
export type ProbeFailureReason = 'timeout' | 'unresolvable' | 'private-address' | 'connection-refused' | 'connection-failed' | 'tls' | 'invalid-url';

export class ProbeFailure extends Error {
  constructor(
    readonly reason: ProbeFailureReason,
    message: string,
  ) {
    super(message);
    this.name = 'ProbeFailure';
  }
}
