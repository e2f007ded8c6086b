import { parseArgs, type ParseArgsConfig } from 'util';
import {
  type ApiKey,
  createShortlinkClient,
  isShortlinkApiError,
  type Link,
  type LinkCreation,
  type LinkEdit,
  type LinkFilters,
  listLinks,
  type ShortlinkClient,
  unwrap,
} from '@shortlink/sdk';

/**
 * `npm run cli -- <command>` (tools/cli/src/shortlink.ts): links and keys of a tenant through the
 * SDK (@shortlink/sdk), with the key of SHORTLINK_API_KEY on the API of SHORTLINK_API_URL (or
 * --api). Output: a link or key as JSON, lists one per line (tab-separated, or JSON with --json).
 * Exit codes: 0 done, 1 the API answered a problem (its code and detail on stderr), 2 usage,
 * 3 no answer (or one that was not the API's).
 */
export const USAGE = `usage: npm run cli -- <command> [--api URL] [--json]
  links create <url> [--alias A] [--domain D] [--title T] [--tag T]... [--expires-at ISO] [--max-clicks N]
                     [--password P] [--redirect-type 301|302] [--disabled] [--body JSON]
  links list [--q TEXT] [--tag T] [--status active|disabled|expired] [--domain D] [--limit N]
  links get <code> [--domain D]
  links update <code> [--domain D] [--url U] [--title T] [--tag T]... [--status active|disabled] [--expires-at ISO]
                      [--max-clicks N] [--password P] [--clear FIELD]... [--body JSON] [--if-match ETAG]
  links delete <code> [--domain D] [--if-match ETAG]
  keys list
  keys create <name> [--scope S]... [--expires-at ISO]
  keys revoke <id>
settings: SHORTLINK_API_URL (default http://127.0.0.1:8081; --api overrides it), SHORTLINK_API_KEY (the key)
exit codes: 0 done, 1 the API refused (problem code and detail on stderr), 2 usage, 3 no answer from the API`;

/** Where the command writes: `out` for results, `err` for messages. */
export interface Io {
  out(line: string): void;
  err(line: string): void;
}

export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;
const GLOBAL: Options = { api: { type: 'string' }, json: { type: 'boolean', default: false }, help: { type: 'boolean', default: false } };
const LINK_FIELDS: Options = {
  title: { type: 'string' },
  tag: { type: 'string', multiple: true },
  'expires-at': { type: 'string' },
  'max-clicks': { type: 'string' },
  password: { type: 'string' },
  'redirect-type': { type: 'string' },
  body: { type: 'string' },
};
const COMMANDS: Record<string, Options> = {
  'links create': { ...LINK_FIELDS, alias: { type: 'string' }, domain: { type: 'string' }, disabled: { type: 'boolean', default: false } },
  'links list': { q: { type: 'string' }, tag: { type: 'string' }, status: { type: 'string' }, domain: { type: 'string' }, limit: { type: 'string' } },
  'links get': { domain: { type: 'string' } },
  'links update': {
    ...LINK_FIELDS,
    domain: { type: 'string' },
    url: { type: 'string' },
    status: { type: 'string' },
    clear: { type: 'string', multiple: true },
    'if-match': { type: 'string' },
  },
  'links delete': { domain: { type: 'string' }, 'if-match': { type: 'string' } },
  'keys list': {},
  'keys create': { scope: { type: 'string', multiple: true }, 'expires-at': { type: 'string' } },
  'keys revoke': {},
};
/** Positionals each command takes. */
const POSITIONALS: Record<string, string[]> = {
  'links create': ['url'],
  'links get': ['code'],
  'links update': ['code'],
  'links delete': ['code'],
  'keys create': ['name'],
  'keys revoke': ['id'],
};

/** The fields `links update --clear` may set to null (the API's "null clears an option"). */
const CLEARABLE = [
  'redirectType',
  'expiresAt',
  'title',
  'tags',
  'maxClicks',
  'password',
  'utm',
  'forwardQuery',
  'geoTargets',
  'deviceTargets',
  'variants',
  'clicksPerIpPerMinute',
  'crawlable',
  'social',
  'appTargets',
  'passwordRememberHours',
] as const;

export interface Parsed {
  readonly command: string;
  readonly args: Record<string, string>;
  readonly values: Record<string, string | boolean | Array<string | boolean> | undefined>;
}

/** The command, its positionals by name and its options; UsageError when they do not fit. */
export function parseCommand(argv: readonly string[]): Parsed {
  const command = argv.slice(0, 2).join(' ');
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h') return { command: 'help', args: {}, values: { help: true } };
  const options = COMMANDS[command];
  if (!options) throw new UsageError(`unknown command: ${command}`);
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv.slice(2)], options: { ...GLOBAL, ...options }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(`${command}: ${(e as Error).message}`);
  }
  if (parsed.values.help) return { command: 'help', args: {}, values: { help: true } };
  const names = POSITIONALS[command] ?? [];
  if (parsed.positionals.length !== names.length) {
    throw new UsageError(`${command} takes ${names.length ? names.map((n) => `<${n}>`).join(' ') : 'no argument'}, got ${parsed.positionals.length}`);
  }
  return { command, args: Object.fromEntries(names.map((n, i) => [n, parsed.positionals[i]])), values: parsed.values };
}

const integer = (name: string, value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} takes a whole number, got "${value}"`);
  return Number(value);
};

const jsonObject = (value: string | undefined): Record<string, unknown> => {
  if (value === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (e) {
    throw new UsageError(`--body is not JSON: ${(e as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError('--body takes a JSON object');
  return parsed as Record<string, unknown>;
};

/** The fields of create and update that have a flag; --body adds any other option of the API (utm, variants, geo targets, …). */
function linkFields(v: Parsed['values']): Record<string, unknown> {
  const redirectType = integer('redirect-type', v['redirect-type'] as string | undefined);
  if (redirectType !== undefined && redirectType !== 301 && redirectType !== 302) throw new UsageError('--redirect-type is 301 or 302');
  return {
    ...jsonObject(v.body as string | undefined),
    ...(v.title !== undefined ? { title: v.title } : {}),
    ...(v.tag !== undefined ? { tags: v.tag } : {}),
    ...(v['expires-at'] !== undefined ? { expiresAt: v['expires-at'] } : {}),
    ...(v['max-clicks'] !== undefined ? { maxClicks: integer('max-clicks', v['max-clicks'] as string) } : {}),
    ...(v.password !== undefined ? { password: v.password } : {}),
    ...(redirectType !== undefined ? { redirectType } : {}),
  };
}

/** The body of POST /api/v1/links for `links create`. */
export function creationOf(p: Parsed): LinkCreation {
  const v = p.values;
  return {
    ...linkFields(v),
    url: p.args.url,
    ...(v.alias !== undefined ? { alias: v.alias as string } : {}),
    ...(v.domain !== undefined ? { domain: v.domain as string } : {}),
    ...(v.disabled ? { status: 'disabled' as const } : {}),
  } as LinkCreation;
}

/** The body of PATCH /api/v1/links/{code} for `links update`; UsageError when it changes nothing. */
export function editOf(p: Parsed): LinkEdit {
  const v = p.values;
  const clear = (v.clear as string[] | undefined) ?? [];
  for (const field of clear) {
    if (!(CLEARABLE as readonly string[]).includes(field)) throw new UsageError(`--clear takes one of ${CLEARABLE.join(', ')}; got "${field}"`);
  }
  if (v.status !== undefined && v.status !== 'active' && v.status !== 'disabled') throw new UsageError('--status is active or disabled');
  const edit = {
    ...linkFields(v),
    ...(v.url !== undefined ? { url: v.url } : {}),
    ...(v.status !== undefined ? { status: v.status } : {}),
    ...Object.fromEntries(clear.map((field) => [field, null])),
  } as LinkEdit;
  if (Object.keys(edit).length === 0) throw new UsageError('links update: nothing to change (give --url, --title, --tag, --status, --clear, --body, …)');
  return edit;
}

const linkLine = (l: Link) => [l.code, l.domain, l.status, l.shortUrl, l.url].join('\t');
/** A key: what it may do now (within its person's role), its state (suspended: its person was removed), whom it acts for. */
const keyLine = (k: ApiKey) =>
  [k.id, k.name, k.prefix, k.activeScopes.join(',') || '-', k.status, k.actsFor ? (k.actsFor.email ?? 'a removed member') : 'no person'].join('\t');
const json = (value: unknown) => JSON.stringify(value, null, 2);

/** Runs one parsed command against the API; throws ShortlinkApiError (the API's problem) or UsageError. */
export async function execute(client: ShortlinkClient, p: Parsed, io: Io): Promise<void> {
  const v = p.values;
  const asJson = v.json === true;
  const domain = v.domain as string | undefined;
  const ifMatch = v['if-match'] as string | undefined;
  const where = (code: string) => ({ path: { code }, ...(domain ? { query: { domain } } : {}) });
  const guarded = (code: string) => ({ ...where(code), ...(ifMatch ? { header: { 'if-match': ifMatch } } : {}) });
  switch (p.command) {
    case 'links create': {
      const link = await unwrap(client.POST('/api/v1/links', { body: creationOf(p) }));
      io.out(asJson ? json(link) : link.shortUrl);
      return;
    }
    case 'links list': {
      const limit = integer('limit', v.limit as string | undefined);
      const status = v.status as LinkFilters['status'] | undefined;
      if (status !== undefined && !['active', 'disabled', 'expired'].includes(status)) throw new UsageError('--status is active, disabled or expired');
      const filters: LinkFilters = {
        limit: Math.min(100, limit ?? 100),
        ...(v.q !== undefined ? { q: v.q as string } : {}),
        ...(v.tag !== undefined ? { tag: v.tag as string } : {}),
        ...(status ? { status } : {}),
        ...(domain ? { domain } : {}),
      };
      let n = 0;
      if (limit === 0) return;
      for await (const link of listLinks(client, filters)) {
        io.out(asJson ? JSON.stringify(link) : linkLine(link));
        if (limit !== undefined && ++n >= limit) break;
      }
      return;
    }
    case 'links get':
      io.out(json(await unwrap(client.GET('/api/v1/links/{code}', { params: where(p.args.code) }))));
      return;
    case 'links update':
      io.out(json(await unwrap(client.PATCH('/api/v1/links/{code}', { params: guarded(p.args.code), body: editOf(p) }))));
      return;
    case 'links delete':
      await unwrap(client.DELETE('/api/v1/links/{code}', { params: guarded(p.args.code) }));
      io.out(`deleted ${domain ? `${domain}/` : ''}${p.args.code}`);
      return;
    case 'keys list': {
      const { keys } = await unwrap(client.GET('/api/v1/keys'));
      for (const key of keys) io.out(asJson ? JSON.stringify(key) : keyLine(key));
      return;
    }
    case 'keys create': {
      const scopes = v.scope as string[] | undefined;
      const body = { name: p.args.name, ...(scopes ? { scopes } : {}), ...(v['expires-at'] !== undefined ? { expiresAt: v['expires-at'] as string } : {}) };
      const issued = await unwrap(client.POST('/api/v1/keys', { body }));
      if (asJson) io.out(json(issued));
      else {
        io.out(issued.apiKey);
        io.err(`key ${issued.key.id} "${issued.key.name}" (${issued.key.scopes.join(', ')}): the secret above is shown this once`);
      }
      return;
    }
    case 'keys revoke':
      await unwrap(client.DELETE('/api/v1/keys/{id}', { params: { path: { id: p.args.id } } }));
      io.out(`revoked ${p.args.id}`);
      return;
    default:
      throw new UsageError(`unknown command: ${p.command}`);
  }
}

/** The problem as the CLI prints it: code, status and detail, then each field of VALIDATION_FAILED. */
export function describeError(error: unknown): { lines: string[]; exitCode: number } {
  if (error instanceof UsageError) return { lines: [`error: ${error.message}`, USAGE], exitCode: 2 };
  if (isShortlinkApiError(error)) {
    const lines = [`error: ${error.code}${error.status ? ` (${error.status})` : ''}: ${error.detail}`];
    for (const issue of error.errors) lines.push(`  ${issue.path || issue.in}: ${issue.message}`);
    if (error.retryAfterSeconds !== null) lines.push(`  try again in ${error.retryAfterSeconds} s`);
    return { lines, exitCode: error.code === 'NETWORK_ERROR' || error.code === 'UNEXPECTED_RESPONSE' ? 3 : 1 };
  }
  return { lines: [`error: ${(error as Error)?.message ?? String(error)}`], exitCode: 3 };
}

/** The whole command line: parse, check the settings, run, report; the exit code. */
export async function run(
  argv: readonly string[],
  settings: { apiUrl: string; apiKey: string | null },
  io: Io,
  fetch?: (r: Request) => Promise<Response>,
): Promise<number> {
  try {
    const parsed = parseCommand(argv);
    if (parsed.command === 'help') {
      io.out(USAGE);
      return 0;
    }
    if (!settings.apiKey) throw new UsageError('SHORTLINK_API_KEY is not set (the key the CLI sends)');
    const baseUrl = (parsed.values.api as string | undefined) ?? settings.apiUrl;
    if (!/^https?:\/\//.test(baseUrl)) throw new UsageError(`--api takes an http(s) URL, got "${baseUrl}"`);
    const client = createShortlinkClient({ baseUrl, apiKey: settings.apiKey, ...(fetch ? { fetch } : {}) });
    await execute(client, parsed, io);
    return 0;
  } catch (error) {
    const { lines, exitCode } = describeError(error);
    for (const line of lines) io.err(line);
    return exitCode;
  }
}
