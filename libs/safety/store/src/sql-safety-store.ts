import { createHash } from 'crypto';
import type {
  AbuseReport,
  BrokenLinkSettings,
  CheckRecord,
  IndexedLink,
  LinkRef,
  QueueItem,
  QueuePosition,
  QueueState,
  ReportReason,
  SafetyStore,
  TargetRecord,
  TargetState,
} from '@shortlink/safety-domain';
import { reversedHost, urlHashOf } from '@shortlink/safety-domain';
import type { ReputationVerdict } from '@shortlink/url-policy';
import { type SqlDialect, type SqlExecutor, toDate } from '@shortlink/sql';

const STATE_TO_DB: Readonly<Record<TargetState, number>> = { unchecked: 0, ok: 1, broken: 2 };
const STATE_FROM_DB: Readonly<Record<number, TargetState>> = { 0: 'unchecked', 1: 'ok', 2: 'broken' };

interface TargetRow {
  url_hash: string;
  url: string;
  host: string;
  state: number | string;
  since: Date | number | string | null;
  last_status: number | string | null;
  last_error: string | null;
  checked_at: Date | number | string | null;
  failures: number | string;
  next_check_at: Date | number | string;
}

interface RefRow {
  link_id: string | number | bigint;
  domain: string;
  code: string;
  tenant_id: string;
}

interface ReportRow extends RefRow {
  id: string;
  reason: string;
  details: string | null;
  reporter: string;
  created_at: Date | number | string;
}

interface QueueRow extends RefRow {
  state: string;
  reports: number | string;
  last_report_at: Date | number | string | null;
  hit: string | null;
  opened_at: Date | number | string;
  updated_at: Date | number | string;
  resolution: string | null;
}

const TARGET_COLUMNS = 'url_hash, url, host, state, since, last_status, last_error, checked_at, failures, next_check_at';
const maybeDate = (v: Date | number | string | null): Date | null => (v === null ? null : toDate(v));
const maybeNumber = (v: number | string | null): number | null => (v === null ? null : Number(v));
const nameHash = (name: string) => createHash('sha256').update(name).digest('hex');
const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');
/** `%` and `_` literal in a LIKE prefix (ESCAPE '!'). */
const likePrefix = (text: string) => `${text.replace(/[!%_]/g, (c) => `!${c}`)}.%`;
/** Statements read or write at most this many keys each. */
const CHUNK = 500;

const refOf = (r: RefRow): LinkRef => ({ linkId: String(r.link_id), domain: r.domain, code: r.code, tenantId: r.tenant_id });

const targetOf = (r: TargetRow): TargetRecord => ({
  urlHash: r.url_hash,
  url: r.url,
  host: r.host,
  state: STATE_FROM_DB[Number(r.state)] ?? 'unchecked',
  since: maybeDate(r.since),
  lastStatus: maybeNumber(r.last_status),
  lastError: r.last_error,
  checkedAt: maybeDate(r.checked_at),
  failures: Number(r.failures),
  nextCheckAt: toDate(r.next_check_at),
});

const reportOf = (r: ReportRow): AbuseReport => ({
  ...refOf(r),
  id: r.id,
  reason: r.reason as ReportReason,
  details: r.details,
  reporter: r.reporter,
  createdAt: toDate(r.created_at),
});

interface StoredHit extends ReputationVerdict {
  readonly at: number;
}
interface StoredResolution {
  readonly action: NonNullable<QueueItem['resolution']>['action'];
  readonly reason: string | null;
  readonly by: string;
  readonly at: number;
}

const queueItemOf = (r: QueueRow): QueueItem => {
  const hit = r.hit ? (JSON.parse(r.hit) as StoredHit) : null;
  const resolution = r.resolution ? (JSON.parse(r.resolution) as StoredResolution) : null;
  return {
    ...refOf(r),
    state: r.state === 'resolved' ? 'resolved' : 'open',
    reports: Number(r.reports),
    lastReportAt: maybeDate(r.last_report_at),
    hit: hit ? { state: hit.state, reason: hit.reason, source: hit.source, at: new Date(hit.at) } : null,
    openedAt: toDate(r.opened_at),
    updatedAt: toDate(r.updated_at),
    resolution: resolution ? { ...resolution, at: new Date(resolution.at) } : null,
  };
};

/**
 * The safety tables (docs/design.md, "Trust and safety") on either meta database: the statements are
 * the same, the dialect says how a time is written and how a duplicate insert is skipped. Writes that
 * may meet a concurrent one (the queue, the leases) are an UPDATE guarded by its condition, then an
 * INSERT that skips a duplicate, so both backends decide in one statement each.
 */
export class SqlSafetyStore implements SafetyStore {
  constructor(
    private readonly db: SqlExecutor,
    private readonly dialect: SqlDialect,
    /** The link ids as the driver takes them (BIGINT). */
    private readonly id: (decimal: string) => unknown,
    private readonly now: () => number = Date.now,
  ) {}

  // ------------------------------------------------------------------ the index of targets

  async index(links: readonly IndexedLink[], now: Date): Promise<void> {
    for (let i = 0; i < links.length; i += CHUNK) await this.indexChunk(links.slice(i, i + CHUNK), now);
  }

  private async indexChunk(links: readonly IndexedLink[], now: Date): Promise<void> {
    const wanted = new Map<string, { link: IndexedLink; url: string; host: string; hash: string }>();
    for (const link of links)
      for (const t of link.targets) wanted.set(`${link.linkId} ${urlHashOf(t.url)}`, { link, url: t.url, host: t.host, hash: urlHashOf(t.url) });
    const existing = await this.db.select<{ link_id: string | number | bigint; url_hash: string }>(
      `SELECT link_id, url_hash FROM safety_link_targets WHERE link_id IN (${marks(links.length)})`,
      links.map((l) => this.id(l.linkId)),
    );
    const have = new Set(existing.map((r) => `${String(r.link_id)} ${r.url_hash}`));
    const stale = existing.filter((r) => !wanted.has(`${String(r.link_id)} ${r.url_hash}`));
    for (let i = 0; i < stale.length; i += CHUNK) {
      const part = stale.slice(i, i + CHUNK);
      await this.db.change(
        `DELETE FROM safety_link_targets WHERE ${part.map(() => '(link_id = ? AND url_hash = ?)').join(' OR ')}`,
        part.flatMap((r) => [r.link_id, r.url_hash]),
      );
    }
    const fresh = [...wanted.entries()].filter(([key]) => !have.has(key)).map(([, v]) => v);
    if (fresh.length)
      await this.db.change(
        `${this.dialect.insertIgnore} safety_link_targets (link_id, url_hash, domain, code, tenant_id, rhost) VALUES ${fresh.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}`,
        fresh.flatMap((t) => [this.id(t.link.linkId), t.hash, t.link.domain, t.link.code, t.link.tenantId, reversedHost(t.host)]),
      );
    // Every target the links name is made sure of (a row dropped as unused meanwhile comes back).
    const targets = [...new Map([...wanted.values()].map((t) => [t.hash, t])).values()];
    if (targets.length)
      await this.db.change(
        `${this.dialect.insertIgnore} safety_targets (url_hash, url, host, state, failures, next_check_at) VALUES ${targets.map(() => '(?, ?, ?, 0, 0, ?)').join(', ')}`,
        targets.flatMap((t) => [t.hash, t.url, t.host, this.dialect.time(now)]),
      );
  }

  async unindex(linkIds: readonly string[]): Promise<void> {
    for (let i = 0; i < linkIds.length; i += CHUNK) {
      const part = linkIds.slice(i, i + CHUNK);
      await this.db.change(`DELETE FROM safety_link_targets WHERE link_id IN (${marks(part.length)})`, part.map(this.id));
    }
  }

  async linksOnHosts(hosts: { covering: readonly string[]; exact: readonly string[] }, after: string | null, limit: number): Promise<LinkRef[]> {
    const equal = [...hosts.covering, ...hosts.exact].map(reversedHost);
    if (equal.length === 0) return [];
    const prefixes = hosts.covering.map((h) => likePrefix(reversedHost(h)));
    const where = [`rhost IN (${marks(equal.length)})`, ...prefixes.map(() => "rhost LIKE ? ESCAPE '!'")].join(' OR ');
    const rows = await this.db.select<RefRow>(
      `SELECT DISTINCT link_id, domain, code, tenant_id FROM safety_link_targets WHERE (${where}) AND link_id > ? ORDER BY link_id LIMIT ?`,
      [...equal, ...prefixes, this.id(after ?? '0'), limit],
    );
    return rows.map(refOf);
  }

  async linksOfTarget(urlHash: string, after: string | null, limit: number): Promise<LinkRef[]> {
    const rows = await this.db.select<RefRow>(
      'SELECT link_id, domain, code, tenant_id FROM safety_link_targets WHERE url_hash = ? AND link_id > ? ORDER BY link_id LIMIT ?',
      [urlHash, this.id(after ?? '0'), limit],
    );
    return rows.map(refOf);
  }

  async targetsOfLinks(linkIds: readonly string[]): Promise<Array<{ linkId: string; target: TargetRecord }>> {
    const found: Array<{ linkId: string; target: TargetRecord }> = [];
    for (let i = 0; i < linkIds.length; i += CHUNK) {
      const part = linkIds.slice(i, i + CHUNK);
      const rows = await this.db.select<TargetRow & { link_id: string | number | bigint }>(
        `SELECT lt.link_id, ${TARGET_COLUMNS.split(', ')
          .map((c) => `t.${c}`)
          .join(', ')} FROM safety_link_targets lt JOIN safety_targets t ON t.url_hash = lt.url_hash WHERE lt.link_id IN (${marks(part.length)})`,
        part.map(this.id),
      );
      found.push(...rows.map((r) => ({ linkId: String(r.link_id), target: targetOf(r) })));
    }
    return found;
  }

  async dueTargets(now: Date, limit: number): Promise<TargetRecord[]> {
    const rows = await this.db.select<TargetRow>(
      `SELECT ${TARGET_COLUMNS} FROM safety_targets WHERE next_check_at <= ? ORDER BY next_check_at, url_hash LIMIT ?`,
      [this.dialect.time(now), limit],
    );
    return rows.map(targetOf);
  }

  async recordCheck(urlHash: string, c: CheckRecord): Promise<void> {
    const t = (d: Date | null) => (d === null ? null : this.dialect.time(d));
    await this.db.change(
      'UPDATE safety_targets SET state = ?, since = ?, last_status = ?, last_error = ?, checked_at = ?, failures = ?, next_check_at = ? WHERE url_hash = ?',
      [STATE_TO_DB[c.state], t(c.since), c.lastStatus, c.lastError, t(c.checkedAt), c.failures, this.dialect.time(c.nextCheckAt), urlHash],
    );
  }

  async postpone(urlHashes: readonly string[], until: Date): Promise<void> {
    for (let i = 0; i < urlHashes.length; i += CHUNK) {
      const part = urlHashes.slice(i, i + CHUNK);
      await this.db.change(`UPDATE safety_targets SET next_check_at = ? WHERE url_hash IN (${marks(part.length)})`, [this.dialect.time(until), ...part]);
    }
  }

  async dropUnused(limit: number): Promise<number> {
    const unused = await this.db.select<{ url_hash: string }>(
      'SELECT t.url_hash FROM safety_targets t LEFT JOIN safety_link_targets lt ON lt.url_hash = t.url_hash WHERE lt.url_hash IS NULL LIMIT ?',
      [limit],
    );
    if (unused.length === 0) return 0;
    return this.db.change(
      `DELETE FROM safety_targets WHERE url_hash IN (${marks(unused.length)}) AND NOT EXISTS (SELECT 1 FROM safety_link_targets lt WHERE lt.url_hash = safety_targets.url_hash)`,
      unused.map((r) => r.url_hash),
    );
  }

  // ------------------------------------------------------------------ reports

  async addReport(r: AbuseReport): Promise<boolean> {
    const added = await this.db.change(
      `${this.dialect.insertIgnore} abuse_reports (id, link_id, domain, code, tenant_id, reason, details, reporter, created_at, relayed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`,
      [r.id, this.id(r.linkId), r.domain, r.code, r.tenantId, r.reason, r.details, r.reporter, this.dialect.time(r.createdAt)],
    );
    return added === 1;
  }

  async unrelayedReports(limit: number): Promise<AbuseReport[]> {
    const rows = await this.db.select<ReportRow>(
      'SELECT id, link_id, domain, code, tenant_id, reason, details, reporter, created_at FROM abuse_reports WHERE relayed = 0 ORDER BY created_at, id LIMIT ?',
      [limit],
    );
    return rows.map(reportOf);
  }

  async markRelayed(ids: readonly string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += CHUNK) {
      const part = ids.slice(i, i + CHUNK);
      await this.db.change(`UPDATE abuse_reports SET relayed = 1 WHERE id IN (${marks(part.length)})`, part);
    }
  }

  async reportsOf(linkId: string, limit: number): Promise<AbuseReport[]> {
    const rows = await this.db.select<ReportRow>(
      'SELECT id, link_id, domain, code, tenant_id, reason, details, reporter, created_at FROM abuse_reports WHERE link_id = ? ORDER BY created_at DESC, id DESC LIMIT ?',
      [this.id(linkId), limit],
    );
    return rows.map(reportOf);
  }

  // ------------------------------------------------------------------ the operators' queue

  async noteReports(link: LinkRef, count: number, at: Date): Promise<void> {
    const t = this.dialect.time(at);
    // `state` is assigned last: MySQL reads the columns assigned before it as their new values.
    await this.upsertQueue(
      link,
      at,
      `UPDATE moderation_queue SET
         reports = CASE WHEN state = 'resolved' THEN ? ELSE reports + ? END,
         hit = CASE WHEN state = 'resolved' THEN NULL ELSE hit END,
         opened_at = CASE WHEN state = 'resolved' THEN ? ELSE opened_at END,
         resolution = NULL, last_report_at = ?, updated_at = ?, state = 'open'
       WHERE link_id = ?`,
      [count, count, t, t, t, this.id(link.linkId)],
      { reports: count, last_report_at: t, hit: null },
    );
  }

  async noteHit(link: LinkRef, hit: ReputationVerdict, at: Date): Promise<void> {
    const t = this.dialect.time(at);
    const json = JSON.stringify({ state: hit.state, reason: hit.reason, source: hit.source, at: at.getTime() } satisfies StoredHit);
    await this.upsertQueue(
      link,
      at,
      `UPDATE moderation_queue SET
         reports = CASE WHEN state = 'resolved' THEN 0 ELSE reports END,
         last_report_at = CASE WHEN state = 'resolved' THEN NULL ELSE last_report_at END,
         opened_at = CASE WHEN state = 'resolved' THEN ? ELSE opened_at END,
         resolution = NULL, hit = ?, updated_at = ?, state = 'open'
       WHERE link_id = ?`,
      [t, json, t, this.id(link.linkId)],
      { reports: 0, last_report_at: null, hit: json },
    );
  }

  /** The item's update, else its insert as `open`; a concurrent insert that won meanwhile is updated after all. */
  private async upsertQueue(
    link: LinkRef,
    at: Date,
    update: string,
    params: readonly unknown[],
    fresh: { reports: number; last_report_at: unknown; hit: string | null },
  ): Promise<void> {
    if ((await this.db.change(update, params)) === 1) return;
    const t = this.dialect.time(at);
    const inserted = await this.db.change(
      `${this.dialect.insertIgnore} moderation_queue (link_id, domain, code, tenant_id, state, reports, last_report_at, hit, opened_at, updated_at, resolution)
       VALUES (?, ?, ?, ?, 'open', ?, ?, ?, ?, ?, NULL)`,
      [this.id(link.linkId), link.domain, link.code, link.tenantId, fresh.reports, fresh.last_report_at, fresh.hit, t, t],
    );
    if (inserted !== 1) await this.db.change(update, params);
  }

  async listQueue(state: QueueState, after: QueuePosition | null, limit: number): Promise<QueueItem[]> {
    const where = ['state = ?'];
    const params: unknown[] = [state];
    if (after !== null) {
      const t = this.dialect.time(after.updatedAt);
      where.push('(updated_at < ? OR (updated_at = ? AND link_id < ?))');
      params.push(t, t, this.id(after.linkId));
    }
    const rows = await this.db.select<QueueRow>(
      `SELECT link_id, domain, code, tenant_id, state, reports, last_report_at, hit, opened_at, updated_at, resolution FROM moderation_queue
       WHERE ${where.join(' AND ')} ORDER BY updated_at DESC, link_id DESC LIMIT ?`,
      [...params, limit],
    );
    return rows.map(queueItemOf);
  }

  async queueItem(linkId: string): Promise<QueueItem | null> {
    const rows = await this.db.select<QueueRow>(
      'SELECT link_id, domain, code, tenant_id, state, reports, last_report_at, hit, opened_at, updated_at, resolution FROM moderation_queue WHERE link_id = ?',
      [this.id(linkId)],
    );
    return rows.length ? queueItemOf(rows[0]) : null;
  }

  async resolve(link: LinkRef, resolution: NonNullable<QueueItem['resolution']>): Promise<void> {
    const json = JSON.stringify({ ...resolution, at: resolution.at.getTime() } satisfies StoredResolution);
    const t = this.dialect.time(resolution.at);
    const update = "UPDATE moderation_queue SET resolution = ?, updated_at = ?, state = 'resolved' WHERE link_id = ?";
    if ((await this.db.change(update, [json, t, this.id(link.linkId)])) === 1) return;
    await this.db.change(
      `${this.dialect.insertIgnore} moderation_queue (link_id, domain, code, tenant_id, state, reports, last_report_at, hit, opened_at, updated_at, resolution)
       VALUES (?, ?, ?, ?, 'resolved', 0, NULL, NULL, ?, ?, ?)`,
      [this.id(link.linkId), link.domain, link.code, link.tenantId, t, t, json],
    );
  }

  // ------------------------------------------------------------------ settings, feeds, leases

  async brokenLinkSettings(tenantId: string): Promise<BrokenLinkSettings | null> {
    const rows = await this.db.select<{ broken_links: string; version: number | string; updated_at: Date | number | string }>(
      'SELECT broken_links, version, updated_at FROM tenant_safety_settings WHERE tenant_id = ?',
      [tenantId],
    );
    return rows.length ? settingsOf(rows[0]) : null;
  }

  async saveBrokenLinkSettings(tenantId: string, settings: BrokenLinkSettings, expectedVersion: number): Promise<boolean> {
    const json = JSON.stringify({ mode: settings.mode, url: settings.url });
    const at = this.dialect.time(settings.updatedAt ?? new Date(this.now()));
    if (expectedVersion === 0)
      return (
        (await this.db.change(`${this.dialect.insertIgnore} tenant_safety_settings (tenant_id, broken_links, version, updated_at) VALUES (?, ?, ?, ?)`, [
          tenantId,
          json,
          settings.version,
          at,
        ])) === 1
      );
    return (
      (await this.db.change('UPDATE tenant_safety_settings SET broken_links = ?, version = ?, updated_at = ? WHERE tenant_id = ? AND version = ?', [
        json,
        settings.version,
        at,
        tenantId,
        expectedVersion,
      ])) === 1
    );
  }

  async allBrokenLinkSettings(): Promise<Array<{ tenantId: string; settings: BrokenLinkSettings }>> {
    const rows = await this.db.select<{ tenant_id: string; broken_links: string; version: number | string; updated_at: Date | number | string }>(
      'SELECT tenant_id, broken_links, version, updated_at FROM tenant_safety_settings',
      [],
    );
    return rows.map((r) => ({ tenantId: r.tenant_id, settings: settingsOf(r) })).filter((s) => s.settings.mode !== 'target');
  }

  async feedDigest(name: string): Promise<string | null> {
    const rows = await this.db.select<{ digest: string }>('SELECT digest FROM safety_feeds WHERE name_hash = ?', [nameHash(name)]);
    return rows.length ? rows[0].digest : null;
  }

  async saveFeedDigest(name: string, digest: string, entries: number, at: Date): Promise<void> {
    const key = nameHash(name);
    const t = this.dialect.time(at);
    if ((await this.db.change('UPDATE safety_feeds SET digest = ?, entries = ?, checked_at = ? WHERE name_hash = ?', [digest, entries, t, key])) === 1) return;
    await this.db.change(`${this.dialect.insertIgnore} safety_feeds (name_hash, name, digest, entries, checked_at) VALUES (?, ?, ?, ?, ?)`, [
      key,
      name,
      digest,
      entries,
      t,
    ]);
  }

  async claimLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    const now = this.now();
    const key = nameHash(name);
    const until = this.dialect.time(new Date(now + ttlMs));
    const taken = await this.db.change('UPDATE safety_leases SET owner = ?, lease_until = ? WHERE name_hash = ? AND (owner = ? OR lease_until < ?)', [
      owner,
      until,
      key,
      owner,
      this.dialect.time(new Date(now)),
    ]);
    if (taken === 1) return true;
    return (await this.db.change(`${this.dialect.insertIgnore} safety_leases (name_hash, owner, lease_until) VALUES (?, ?, ?)`, [key, owner, until])) === 1;
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    await this.db.change('DELETE FROM safety_leases WHERE name_hash = ? AND owner = ?', [nameHash(name), owner]);
  }
}

function settingsOf(r: { broken_links: string; version: number | string; updated_at: Date | number | string }): BrokenLinkSettings {
  const stored = JSON.parse(r.broken_links) as { mode: BrokenLinkSettings['mode']; url: string | null };
  return { mode: stored.mode, url: stored.url ?? null, version: Number(r.version), updatedAt: toDate(r.updated_at) };
}
