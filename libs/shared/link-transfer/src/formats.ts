/**
 * The CSV (and JSON) link exports `npm run links:import` reads, and how each maps onto a
 * `POST /api/v1/links` body (README, "Import and export"; docs/design.md, "Batch creation").
 * A file's format is told by its header; `--format` names it when a header is ambiguous.
 */
export type Format = 'shortlink' | 'bitly' | 'shlink' | 'yourls' | 'kutt';
export const FORMATS: readonly Format[] = ['shortlink', 'bitly', 'shlink', 'yourls', 'kutt'];

/** The body of one create, as far as an export has it. */
export interface LinkBody {
  url?: string;
  alias?: string;
  domain?: string;
  title?: string;
  tags?: string[];
  expiresAt?: string;
  redirectType?: number;
  maxClicks?: number;
  password?: string;
  utm?: Record<string, string>;
}

export interface MapOptions {
  /** Keep the source's short codes as aliases (default true); false: new codes are generated. */
  readonly keepCodes: boolean;
  /** Keep the source's domains (default false: links go on the default domain, as another tool's domain is not yours here). */
  readonly keepDomains: boolean;
}

/** A record keyed by its normalised header (lower case, spaces and dashes as underscores). */
export type CsvRecord = Readonly<Record<string, string>>;

export const normaliseHeader = (h: string): string => h.replace(/^\uFEFF/, '').trim().toLowerCase().replace(/[\s-]+/g, '_');

/** The first of `names` the record has a non-empty value for. */
const pick = (r: CsvRecord, ...names: string[]): string | undefined => {
  for (const n of names) {
    const v = r[n]?.trim();
    if (v) return v;
  }
  return undefined;
};

/** Tags in one cell: Shlink joins them with "|", Bitly's and spreadsheets' use "," or ";". */
const splitTags = (cell: string | undefined): string[] | undefined => {
  const tags = cell?.split(/[|,;]/).map((t) => t.trim()).filter(Boolean);
  return tags?.length ? tags : undefined;
};

/** The last path segment of a short URL ("https://bit.ly/3abcDEF" → "3abcDEF"), or the cell itself. */
const backHalf = (cell: string | undefined): string | undefined => {
  if (!cell) return undefined;
  try {
    const path = new URL(/^[a-z]+:\/\//i.test(cell) ? cell : `https://${cell}`).pathname.split('/').filter(Boolean);
    return path.length ? decodeURIComponent(path[path.length - 1]) : undefined;
  } catch {
    return cell;
  }
};

/** The host of a short URL, for `keepDomains`. */
const hostOf = (cell: string | undefined): string | undefined => {
  if (!cell) return undefined;
  try {
    return new URL(/^[a-z]+:\/\//i.test(cell) ? cell : `https://${cell}`).host || undefined;
  } catch {
    return undefined;
  }
};

/** A date in any form `Date` reads (ISO 8601, YOURLS' "2024-05-01 10:00:00" read as UTC), as ISO 8601; else as given (the API says why). */
const isoDate = (cell: string | undefined): string | undefined => {
  if (!cell) return undefined;
  const text = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?$/.test(cell) ? `${cell.replace(' ', 'T')}Z` : cell;
  const d = new Date(text);
  return Number.isNaN(d.getTime()) ? cell : d.toISOString();
};

const int = (cell: string | undefined): number | undefined => (cell && /^\d+$/.test(cell) ? Number(cell) : undefined);

const UTM = ['source', 'medium', 'campaign', 'term', 'content'] as const;

/**
 * Column mapping per format. Columns not named here (clicks, visits, creation dates, IPs, ids) have
 * no place in a new link and are left out.
 */
export const COLUMN_MAPPING: Readonly<Record<Format, ReadonlyArray<readonly [from: string, to: string]>>> = {
  shortlink: [
    ['url', 'url'], ['alias', 'alias'], ['domain', 'domain'], ['title', 'title'], ['tags (| , or ; between tags)', 'tags'], ['expiresAt', 'expiresAt'],
    ['redirectType', 'redirectType'], ['maxClicks', 'maxClicks'], ['password', 'password'], ['utm_source … utm_content', 'utm'],
  ],
  bitly: [['long_url / Long URL', 'url'], ['link / Bitlink / custom_bitlinks (its back-half)', 'alias'], ['title', 'title'], ['tags', 'tags']],
  shlink: [['longUrl', 'url'], ['shortCode', 'alias'], ['domain (with --keep-domains)', 'domain'], ['title', 'title'], ['tags (joined with |)', 'tags']],
  yourls: [['url', 'url'], ['keyword', 'alias'], ['title', 'title']],
  kutt: [['target', 'url'], ['address', 'alias'], ['domain (with --keep-domains)', 'domain'], ['description', 'title'], ['expire_in', 'expiresAt']],
};

/** The format a header names: the first whose distinctive columns are all there. */
export function detectFormat(headers: readonly string[]): Format | null {
  const h = new Set(headers.map(normaliseHeader));
  if (h.has('target') && h.has('address')) return 'kutt';
  if (h.has('longurl') && h.has('shortcode')) return 'shlink';
  if (h.has('keyword') && h.has('url')) return 'yourls';
  if (h.has('long_url') || h.has('bitlink') || (h.has('link') && h.has('long_url'))) return 'bitly';
  if (h.has('url')) return 'shortlink';
  return null;
}

/** One exported link as a create body. */
export function toLinkBody(format: Format, r: CsvRecord, options: MapOptions): LinkBody {
  const body: LinkBody = {};
  const set = <K extends keyof LinkBody>(key: K, value: LinkBody[K] | undefined) => {
    if (value !== undefined) body[key] = value;
  };
  switch (format) {
    case 'shortlink': {
      set('url', pick(r, 'url'));
      set('alias', options.keepCodes ? pick(r, 'alias') : undefined);
      set('domain', pick(r, 'domain'));
      set('title', pick(r, 'title'));
      set('tags', splitTags(pick(r, 'tags')));
      set('expiresAt', pick(r, 'expiresat', 'expires_at'));
      set('redirectType', int(pick(r, 'redirecttype', 'redirect_type')));
      set('maxClicks', int(pick(r, 'maxclicks', 'max_clicks')));
      set('password', pick(r, 'password'));
      const utm = Object.fromEntries(UTM.flatMap((k) => (pick(r, `utm_${k}`) ? [[k, pick(r, `utm_${k}`)!]] : [])));
      if (Object.keys(utm).length) body.utm = utm;
      break;
    }
    case 'bitly': {
      const short = pick(r, 'custom_bitlinks', 'link', 'bitlink', 'short_link', 'bitly_link', 'short_url');
      set('url', pick(r, 'long_url', 'original_url', 'destination'));
      set('alias', options.keepCodes ? backHalf(short?.split(/[,|]/)[0].trim()) : undefined);
      set('domain', options.keepDomains ? hostOf(short) : undefined);
      set('title', pick(r, 'title'));
      set('tags', splitTags(pick(r, 'tags')));
      break;
    }
    case 'shlink':
      set('url', pick(r, 'longurl'));
      set('alias', options.keepCodes ? pick(r, 'shortcode') : undefined);
      set('domain', options.keepDomains ? pick(r, 'domain') ?? hostOf(pick(r, 'shorturl')) : undefined);
      set('title', pick(r, 'title'));
      set('tags', splitTags(pick(r, 'tags')));
      break;
    case 'yourls':
      set('url', pick(r, 'url'));
      set('alias', options.keepCodes ? pick(r, 'keyword') : undefined);
      set('title', pick(r, 'title'));
      break;
    case 'kutt':
      set('url', pick(r, 'target'));
      set('alias', options.keepCodes ? pick(r, 'address') : undefined);
      set('domain', options.keepDomains ? pick(r, 'domain') : undefined);
      set('title', pick(r, 'description'));
      set('expiresAt', isoDate(pick(r, 'expire_in')));
      break;
  }
  return body;
}

/**
 * Kutt has no file export: its API's link list (`GET /api/v2/links`, `{limit, skip, total, data}`)
 * is what users save. Its links as CSV records, so they map like the CSV formats.
 */
export function kuttRecords(json: unknown): CsvRecord[] {
  const list = Array.isArray(json) ? json : (json as { data?: unknown })?.data;
  if (!Array.isArray(list)) throw new Error('not a Kutt link list: expected {"data": [...]} or an array of links');
  return list.map((link) =>
    Object.fromEntries(Object.entries(link as Record<string, unknown>).map(([k, v]) => [normaliseHeader(k), v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v)])),
  );
}
