import { unguardCell } from './csv-cells';
// PHP's htmlspecialchars/htmlentities escaped YOURLS titles; decoded once, as a browser would (semicolons required).
import { decodeHTMLStrict } from 'entities';

/**
 * The CSV (and JSON) link exports `npm run links:import` reads, and how each maps onto a
 * `POST /api/v1/links` body (README, "Import and export"; docs/design.md, "Batch creation").
 * A file's format is told by its header; `--format` names it when a header is ambiguous.
 */
export type Format = 'shortlink' | 'bitly' | 'shlink' | 'yourls' | 'kutt';
export const FORMATS: readonly Format[] = ['shortlink', 'bitly', 'shlink', 'yourls', 'kutt'];

/** The body of one create, as far as an export has it (values a cell could not be read as go as given: the API says why). */
export interface LinkBody {
  url?: string;
  /** The source's code, kept as it was (`legacyCode` of the create: 1-64 characters, "/" between segments). */
  legacyCode?: string;
  domain?: string;
  title?: string;
  tags?: string[];
  expiresAt?: string;
  redirectType?: number | string;
  maxClicks?: number | string;
  password?: string;
  passwordHash?: string;
  status?: string;
  utm?: Record<string, string>;
  forwardQuery?: boolean | string;
  redirectRules?: unknown;
  geoTargets?: unknown;
  deviceTargets?: unknown;
  variants?: unknown;
  clicksPerIpPerMinute?: number | string;
  passwordRememberHours?: number | string;
  social?: unknown;
  appTargets?: unknown;
}

/** One exported link as a create, and why it was made less open than its source (a line in the results). */
export interface MappedRow {
  readonly body: LinkBody;
  readonly note?: string;
}

export interface MapOptions {
  /** Keep the source's short codes (default true); false: new codes are generated. */
  readonly keepCodes: boolean;
  /** Keep the source's domains (default false: links go on the default domain, as another tool's (or installation's) domain is not yours here). */
  readonly keepDomains: boolean;
  /** The time an expiry is compared with (epoch ms; default now): a link expired at the source arrives disabled. */
  readonly now?: number;
}

/** A record keyed by its normalised header (lower case, spaces and dashes as underscores). */
export type CsvRecord = Readonly<Record<string, string>>;

export const normaliseHeader = (h: string): string =>
  h
    .replace(/^\uFEFF/, '')
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');

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
  const tags = cell
    ?.split(/[|,;]/)
    .map((t) => t.trim())
    .filter(Boolean);
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

/** A whole number; another value as given, so the API refuses the row rather than the limit being dropped. */
const int = (cell: string | undefined): number | string | undefined => (cell === undefined ? undefined : /^\d{1,15}$/.test(cell) ? Number(cell) : cell);

const bool = (cell: string | undefined): boolean | string | undefined => {
  const lower = cell?.toLowerCase();
  return lower === 'true' ? true : lower === 'false' ? false : cell;
};

/** A JSON cell (our export writes geoTargets, deviceTargets and variants so); else as given. */
const json = (cell: string | undefined): unknown => {
  if (cell === undefined) return undefined;
  try {
    return JSON.parse(cell) as unknown;
  } catch {
    return cell;
  }
};

const isTrue = (cell: string | undefined) => cell?.toLowerCase() === 'true';

const UTM = ['source', 'medium', 'campaign', 'term', 'content'] as const;

/** The format a header names: the first whose distinctive columns are all there. */
export function detectFormat(headers: readonly string[]): Format | null {
  const h = new Set(headers.map(normaliseHeader));
  if (h.has('target') && h.has('address')) return 'kutt';
  if (h.has('longurl') && h.has('shortcode')) return 'shlink';
  if (h.has('keyword') && h.has('url')) return 'yourls';
  // The YOURLS Import-Export plugin's CSV: source,target,hits (source is "/keyword/").
  if (h.has('source') && h.has('target')) return 'yourls';
  if (h.has('long_url') || h.has('bitlink') || (h.has('link') && h.has('long_url'))) return 'bitly';
  if (h.has('url')) return 'shortlink';
  return null;
}

/** A title on one line: line breaks, tabs and other control characters (a Shlink title may have them; ours may not) become one space. */
const oneLine = (title: string): string =>
  title
    .replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ')
    .replace(/ {2,}/g, ' ')
    .trim();

/**
 * One exported link as a create. An import never makes a link more open than its source: a link
 * disabled, banned, archived or expired there is created disabled (an expiry in the past is not
 * one a link can be given), and so is one whose password cannot be carried (a Kutt list says only
 * `password: true`; an export of ours made without `links:write` has no hash), with a note saying why.
 */
export function mapRecord(format: Format, r: CsvRecord, options: MapOptions): MappedRow {
  const body: LinkBody = {};
  const notes: string[] = [];
  const set = <K extends keyof LinkBody>(key: K, value: LinkBody[K] | undefined) => {
    if (value !== undefined) body[key] = value;
  };
  const disable = (why: string) => {
    body.status = 'disabled';
    notes.push(why);
  };
  switch (format) {
    case 'shortlink': {
      // Our own export: its cells were guarded against spreadsheet formulas (csv-cells.ts).
      const cell = (...names: string[]) => {
        const v = pick(r, ...names);
        return v === undefined ? undefined : unguardCell(v);
      };
      set('url', cell('url'));
      set('legacyCode', options.keepCodes ? cell('alias') : undefined);
      set('domain', options.keepDomains ? cell('domain') : undefined);
      set('title', cell('title'));
      set('tags', splitTags(cell('tags')));
      set('expiresAt', cell('expiresat', 'expires_at'));
      set('redirectType', int(cell('redirecttype', 'redirect_type')));
      set('maxClicks', int(cell('maxclicks', 'max_clicks')));
      set('status', cell('status'));
      set('password', cell('password'));
      set('passwordHash', cell('passwordhash', 'password_hash'));
      const utm = Object.fromEntries(UTM.flatMap((k) => (cell(`utm_${k}`) ? [[k, cell(`utm_${k}`)!]] : [])));
      if (Object.keys(utm).length) body.utm = utm;
      set('forwardQuery', bool(cell('forwardquery', 'forward_query')));
      set('geoTargets', json(cell('geotargets', 'geo_targets')));
      set('deviceTargets', json(cell('devicetargets', 'device_targets')));
      set('redirectRules', json(cell('redirectrules', 'redirect_rules')));
      set('variants', json(cell('variants')));
      set('clicksPerIpPerMinute', int(cell('clicksperipperminute', 'clicks_per_ip_per_minute')));
      set('passwordRememberHours', int(cell('passwordrememberhours', 'password_remember_hours')));
      set('social', json(cell('social')));
      set('appTargets', json(cell('apptargets', 'app_targets')));
      if (isTrue(cell('passwordprotected', 'password_protected')) && !body.passwordHash && !body.password) {
        disable('password-protected at the source, but the export carries no password hash (exported with a key without links:write): created disabled');
      }
      break;
    }
    case 'bitly': {
      const short = pick(r, 'custom_bitlinks', 'link', 'bitlink', 'short_link', 'bitly_link', 'short_url');
      set('url', pick(r, 'long_url', 'original_url', 'destination'));
      set('legacyCode', options.keepCodes ? backHalf(short?.split(/[,|]/)[0].trim()) : undefined);
      set('domain', options.keepDomains ? hostOf(short) : undefined);
      set('title', pick(r, 'title'));
      set('tags', splitTags(pick(r, 'tags')));
      if (isTrue(pick(r, 'archived'))) disable('archived on Bitly: created disabled');
      break;
    }
    case 'shlink':
      set('url', pick(r, 'longurl'));
      set('legacyCode', options.keepCodes ? pick(r, 'shortcode') : undefined);
      set('domain', options.keepDomains ? (pick(r, 'domain') ?? hostOf(pick(r, 'shorturl'))) : undefined);
      set('title', pick(r, 'title'));
      set('tags', splitTags(pick(r, 'tags')));
      break;
    case 'yourls': {
      set('url', pick(r, 'url', 'target'));
      const keyword = pick(r, 'keyword') ?? pick(r, 'source')?.replace(/^\/+|\/+$/g, '');
      set('legacyCode', options.keepCodes && keyword ? keyword : undefined);
      const title = pick(r, 'title');
      set('title', title === undefined ? undefined : decodeHTMLStrict(title));
      break;
    }
    case 'kutt':
      set('url', pick(r, 'target'));
      set('legacyCode', options.keepCodes ? pick(r, 'address') : undefined);
      set('domain', options.keepDomains ? pick(r, 'domain') : undefined);
      set('title', pick(r, 'description'));
      set('expiresAt', isoDate(pick(r, 'expire_in')));
      if (isTrue(pick(r, 'banned'))) disable('banned on Kutt: created disabled');
      if (isTrue(pick(r, 'password')))
        disable('password-protected on Kutt, whose link list carries no password hash: created disabled; set a password and enable it');
      break;
  }
  if (body.title !== undefined) {
    const title = oneLine(body.title);
    if (title) body.title = title;
    else delete body.title;
  }
  const expires = typeof body.expiresAt === 'string' ? Date.parse(body.expiresAt) : NaN;
  if (!Number.isNaN(expires) && expires <= (options.now ?? Date.now())) {
    delete body.expiresAt;
    disable(`expired at the source (${new Date(expires).toISOString()}): created disabled`);
  }
  return notes.length ? { body, note: notes.join('; ') } : { body };
}

/**
 * Kutt has no file export: its API's link list (`GET /api/v2/links`, `{limit, skip, total, data}`)
 * is what users save. Its links as CSV records, so they map like the CSV formats.
 */
export function kuttRecords(json: unknown): CsvRecord[] {
  const list = Array.isArray(json) ? json : (json as { data?: unknown })?.data;
  if (!Array.isArray(list)) throw new Error('not a Kutt link list: expected {"data": [...]} or an array of links');
  return list.map((link) =>
    Object.fromEntries(
      Object.entries(link as Record<string, unknown>).map(([k, v]) => [
        normaliseHeader(k),
        v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v),
      ]),
    ),
  );
}
