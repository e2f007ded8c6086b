import { createHash } from 'crypto';
import { toDate } from '@shortlink/sql';
import {
  HealthFilter,
  Link,
  LinkHealth,
  LinkListQuery,
  LinkOptions,
  LinkStatus,
  Moderation,
  ModerationSource,
  NO_OPTIONS,
  rulesFromTargets,
  ShortUrlIdentifier,
} from '@shortlink/links-domain';
import { StoredRow } from '@shortlink/sharding-domain';

/** Small integers in the status and moderation columns, shared by both SQL backends. */
export const STATUS_TO_DB: Readonly<Record<LinkStatus, number>> = { active: 1, disabled: 2, expired: 3 };
const STATUS_FROM_DB: Readonly<Record<number, LinkStatus>> = { 1: 'active', 2: 'disabled', 3: 'expired' };
export const MODERATION_TO_DB: Readonly<Record<Moderation, number>> = { clear: 0, flagged: 1, banned: 2 };
const MODERATION_FROM_DB: Readonly<Record<number, Moderation>> = { 0: 'clear', 1: 'flagged', 2: 'banned' };
/** The `health` column: 0 never checked, 1 ok, 2 broken (the list filter's index: docs/design.md, "Trust and safety"). */
export const HEALTH_TO_DB: Readonly<Record<HealthFilter, number>> = { unchecked: 0, ok: 1, broken: 2 };

/** Columns of `links` in the order both backends select and insert them. */
export const LINK_COLUMNS = [
  'id',
  'domain',
  'code',
  'target_url',
  'tenant_id',
  'created_at',
  'updated_at',
  'expires_at',
  'status',
  'redirect_type',
  'version',
  'moderation',
  'title',
  'options',
  'crawlable',
  'health',
  'health_detail',
] as const;

export interface LinkRow {
  id: string | number | bigint;
  domain: string;
  code: string;
  target_url: string;
  tenant_id: string;
  created_at: Date | number | string;
  updated_at: Date | number | string | null;
  expires_at: Date | number | string | null;
  status: number;
  redirect_type: number;
  version: number | string;
  moderation: number;
  title: string | null;
  options: string | null;
  crawlable: number | string;
  health: number | string | null;
  health_detail: string | null;
}

/**
 * Options kept in the JSON `options` column: everything of a link that is not a column of its own.
 * Rows written before redirect rules existed hold `geoTargets` and `deviceTargets` instead of
 * `redirectRules`: they are read as the rules they are (docs/design.md, "Redirect rules"), and the
 * next write of the link stores its rules.
 */
type StoredOptions = { -readonly [K in keyof Omit<LinkOptions, 'title' | 'crawlable'>]: LinkOptions[K] } & {
  moderationReason: string | null;
  moderationSource: ModerationSource | null;
  geoTargets?: Record<string, string> | null;
  deviceTargets?: Record<string, string> | null;
  tagConversionParam?: string | null;
};

/** The JSON of the `health_detail` column (times in epoch ms). */
interface StoredHealth {
  since: number;
  brokenTargets: string[];
  lastStatus: number | null;
  lastError: string | null;
  checkedAt: number;
}

/** A link's health from its two columns; null when never checked. */
export function healthFromRow(state: number | string | null, detail: string | null): LinkHealth | null {
  const code = Number(state ?? 0);
  if ((code !== 1 && code !== 2) || !detail) return null;
  const d = JSON.parse(detail) as StoredHealth;
  return {
    state: code === 2 ? 'broken' : 'ok',
    since: new Date(d.since),
    brokenTargets: d.brokenTargets ?? [],
    lastStatus: d.lastStatus ?? null,
    lastError: d.lastError ?? null,
    checkedAt: new Date(d.checkedAt),
  };
}

/** The `health` and `health_detail` columns of a link's health. */
export function healthColumns(health: LinkHealth | null | undefined): { health: number; health_detail: string | null } {
  if (!health) return { health: 0, health_detail: null };
  const detail: StoredHealth = {
    since: health.since.getTime(),
    brokenTargets: [...health.brokenTargets],
    lastStatus: health.lastStatus,
    lastError: health.lastError,
    checkedAt: health.checkedAt.getTime(),
  };
  return { health: HEALTH_TO_DB[health.state], health_detail: JSON.stringify(detail) };
}

export function linkFromRow(row: LinkRow): Link {
  const stored = (row.options ? (JSON.parse(row.options) as Partial<StoredOptions>) : {}) as Partial<StoredOptions>;
  const createdAt = toDate(row.created_at);
  return {
    ...NO_OPTIONS,
    tags: stored.tags ?? [],
    maxClicks: stored.maxClicks ?? null,
    passwordHash: stored.passwordHash ?? null,
    utm: stored.utm ?? null,
    forwardQuery: stored.forwardQuery ?? true,
    redirectRules: stored.redirectRules ?? rulesFromTargets(stored.geoTargets, stored.deviceTargets),
    variants: stored.variants ?? null,
    clicksPerIpPerMinute: stored.clicksPerIpPerMinute ?? null,
    passwordRememberHours: stored.passwordRememberHours ?? null,
    social: stored.social ?? null,
    appTargets: stored.appTargets ?? null,
    trackConversions: stored.trackConversions ?? false,
    conversionParam: stored.conversionParam ?? null,
    ...(stored.tagConversionParam ? { tagConversionParam: stored.tagConversionParam } : {}),
    id: String(row.id),
    domain: row.domain,
    code: row.code,
    targetUrl: row.target_url,
    tenantId: row.tenant_id,
    createdAt,
    updatedAt: row.updated_at === null ? createdAt : toDate(row.updated_at),
    expiresAt: row.expires_at === null ? null : toDate(row.expires_at),
    status: STATUS_FROM_DB[Number(row.status)] ?? 'disabled',
    redirectType: Number(row.redirect_type) === 301 ? 301 : 302,
    version: Number(row.version),
    moderation: MODERATION_FROM_DB[Number(row.moderation)] ?? 'clear',
    moderationReason: stored.moderationReason ?? null,
    moderationSource: stored.moderationSource ?? null,
    title: row.title,
    crawlable: Number(row.crawlable) === 1,
    health: healthFromRow(row.health, row.health_detail),
  };
}

/** The JSON of the `options` column: only what differs from the defaults, to keep rows small. */
export function optionsJson(link: Link): string | null {
  const stored: Partial<StoredOptions> = {};
  if (link.tags.length) stored.tags = link.tags;
  if (link.maxClicks !== null) stored.maxClicks = link.maxClicks;
  if (link.passwordHash !== null) stored.passwordHash = link.passwordHash;
  if (link.utm !== null) stored.utm = link.utm;
  if (!link.forwardQuery) stored.forwardQuery = false;
  if (link.redirectRules !== null) stored.redirectRules = link.redirectRules;
  if (link.variants !== null) stored.variants = link.variants;
  if (link.clicksPerIpPerMinute !== null) stored.clicksPerIpPerMinute = link.clicksPerIpPerMinute;
  if (link.passwordRememberHours !== null) stored.passwordRememberHours = link.passwordRememberHours;
  if (link.social !== null) stored.social = link.social;
  if (link.appTargets !== null) stored.appTargets = link.appTargets;
  if (link.trackConversions) stored.trackConversions = true;
  if (link.conversionParam !== null) stored.conversionParam = link.conversionParam;
  if (link.tagConversionParam) stored.tagConversionParam = link.tagConversionParam;
  if (link.moderationReason !== null) stored.moderationReason = link.moderationReason;
  if (link.moderationSource) stored.moderationSource = link.moderationSource;
  return Object.keys(stored).length ? JSON.stringify(stored) : null;
}

/**
 * `%`, `_` and `!` taken literally in a LIKE pattern (ESCAPE '!'): not a backslash, which is an
 * escape inside MySQL string literals but not inside SQLite's.
 */
export const likePattern = (text: string): string => `%${text.replace(/[!%_]/g, (c) => `!${c}`)}%`;

/**
 * The SELECT of a tenant's page, for both SQL backends (positional parameters), newest first: from
 * the (tenant, created_at, id) index (with a status: (tenant, status, created_at, id)), or the tag
 * table's (tenant, tag, link) key when a tag is asked for (those rows are then sorted). After a
 * position: `created_at <= t` is the index range, the rest drops that millisecond's later ids.
 */
export function tenantPageQuery(q: LinkListQuery, to: { id: (decimal: string) => unknown; time: (at: Date) => unknown }): { sql: string; params: unknown[] } {
  const where = ['l.tenant_id = ?'];
  const params: unknown[] = [q.tenantId];
  const add = (clause: string, ...values: unknown[]) => {
    where.push(clause);
    params.push(...values);
  };
  if (q.after !== null) add('l.created_at <= ? AND (l.created_at < ? OR l.id < ?)', to.time(q.after.createdAt), to.time(q.after.createdAt), to.id(q.after.id));
  if (q.status) add('l.status = ?', STATUS_TO_DB[q.status]);
  if (q.domain) add('l.domain = ?', q.domain);
  if (q.health) add('l.health = ?', HEALTH_TO_DB[q.health]);
  if (q.search) {
    const pattern = likePattern(q.search);
    add("(l.code LIKE ? ESCAPE '!' OR l.title LIKE ? ESCAPE '!' OR l.target_url LIKE ? ESCAPE '!')", pattern, pattern, pattern);
  }
  const select = `SELECT ${LINK_COLUMNS.map((c) => `l.${c}`).join(', ')} FROM links l`;
  const from = q.tag ? `${select} JOIN link_tags t ON t.link_id = l.id AND t.tenant_id = l.tenant_id AND t.tag = ?` : select;
  return { sql: `${from} WHERE ${where.join(' AND ')} ORDER BY l.created_at DESC, l.id DESC LIMIT ?`, params: [...(q.tag ? [q.tag] : []), ...params, q.limit] };
}

/** Codes per statement of a look-up by many identifiers. */
const CODES_PER_STATEMENT = 500;

/**
 * Identifiers grouped by domain in slices of at most 500 codes: each group is one
 * `domain = ? AND code IN (...)` range of the (domain, code) unique key, on both SQL backends.
 */
export function codesByDomain(ids: readonly ShortUrlIdentifier[]): Array<{ domain: string; codes: string[]; placeholders: string }> {
  const byDomain = new Map<string, Set<string>>();
  for (const id of ids) {
    const codes = byDomain.get(id.domain) ?? new Set<string>();
    codes.add(id.code);
    byDomain.set(id.domain, codes);
  }
  const groups: Array<{ domain: string; codes: string[]; placeholders: string }> = [];
  for (const [domain, set] of byDomain) {
    const codes = [...set];
    for (let i = 0; i < codes.length; i += CODES_PER_STATEMENT) {
      const slice = codes.slice(i, i + CODES_PER_STATEMENT);
      groups.push({ domain, codes: slice, placeholders: slice.map(() => '?').join(', ') });
    }
  }
  return groups;
}

/**
 * A link row as the resharding tool copies it: the values of LINK_COLUMNS as the driver returns
 * them (written back unchanged to the same kind of database) and the row's tags. Copying by
 * column list keeps columns added later (docs/design.md, "Online resharding").
 */
export interface RowData {
  readonly values: readonly unknown[];
  readonly tags: ReadonlyArray<readonly [tenantId: string, tag: string]>;
}

const canonical = (v: unknown): string =>
  v === null || v === undefined ? '\u2205' : v instanceof Date ? String(v.getTime()) : Buffer.isBuffer(v) ? v.toString('hex') : String(v);

/** Digest of every column and tag (dates as epoch ms, so both backends agree), 64 bits in hex. */
export function rowChecksum(data: RowData): string {
  const tags = data.tags.map(([t, tag]) => `${t}\u0002${tag}`).sort();
  return createHash('sha256')
    .update(`${data.values.map(canonical).join('\u0001')}\u0003${tags.join('\u0001')}`)
    .digest('hex')
    .slice(0, 16);
}

export const COLUMN_INDEX = Object.fromEntries(LINK_COLUMNS.map((c, i) => [c, i])) as Record<(typeof LINK_COLUMNS)[number], number>;

/** A StoredRow from the values of LINK_COLUMNS, the tags and the row's `click_count` (outside the data and the checksum). */
export function storedRow(values: readonly unknown[], tags: RowData['tags'], clicks = 0): StoredRow {
  const data: RowData = { values, tags };
  return {
    id: String(values[COLUMN_INDEX.id]),
    domain: String(values[COLUMN_INDEX.domain]),
    code: String(values[COLUMN_INDEX.code]),
    version: Number(values[COLUMN_INDEX.version]),
    checksum: rowChecksum(data),
    data,
    clicks,
  };
}

/** Tag rows grouped by link id, as RowData wants them. */
export function tagsByLink(rows: ReadonlyArray<{ link_id: unknown; tenant_id: string; tag: string }>): Map<string, Array<readonly [string, string]>> {
  const byId = new Map<string, Array<readonly [string, string]>>();
  for (const t of rows) {
    const list = byId.get(String(t.link_id)) ?? [];
    list.push([t.tenant_id, t.tag]);
    byId.set(String(t.link_id), list);
  }
  return byId;
}
