import type { IncomingMessage, ServerResponse } from 'http';
import { performance } from 'perf_hooks';
import { AppConfig } from '@shortlink/config';
import { DomainError, ErrorCode, KeyedWindowLimiter, normalizeHost } from '@shortlink/core';
import {
  CachedLink, ClickQuota, encodeQueryPart, GlobalRateLimiter, LinkRules, PasswordAttempts, PasswordCheckGate, PasswordHasher, RedirectDecision,
  RedirectPipeline, RESERVED_PATHS, ShortUrlIdentifier, unknownLink,
} from '@shortlink/links-domain';
import { ClientAddressResolver, problemFor, retryAfterFor } from '@shortlink/nest-platform';
import { TenantDirectory } from '@shortlink/tenants-domain';
import { ClickRecorder } from './click-recorder';
import { blockedPage, Page, passwordPage, previewPage, refusalPage, sendPage, suspendedPage, warningPage } from './pages';
import { RedirectMetrics } from './redirect.metrics';

/**
 * A code, optionally followed by `+` (the preview page) or `/go` (past a flagged link's warning),
 * optionally with a query string: `/abc1234`, `/abc1234+`, `/abc1234/go?x=1`. Codes an import kept
 * (docs/design.md, "Import and export") may be 1-2 characters or have segments: `/1`,
 * `/blog/2024/launch`; a last segment `go` is the suffix (no code ends in one), and the lookahead
 * holds the code to 64 characters.
 */
const CODE_PATH = /^\/(?=[A-Za-z0-9_/-]{1,64}(?:\/go|\+)?(?:\?|$))([A-Za-z0-9][A-Za-z0-9_-]*(?:\/(?!go(?:\?|$))[A-Za-z0-9][A-Za-z0-9_-]*)*)(\+|\/go)?(?:\?(.*))?$/;
/** A path whose first segment is reserved (`/docs/…`) is not a code. */
const firstSegment = (code: string) => {
  const slash = code.indexOf('/');
  return slash < 0 ? code : code.slice(0, slash);
};

/** A password form's body: `password=` and at most 128 characters, percent-encoded up to 3 bytes each. */
const MAX_FORM_BYTES = 1024;

/** What the link options need besides the read path (docs/design.md, "Link options"). */
export interface LinkOptionParts {
  readonly rules: LinkRules;
  readonly quota: ClickQuota;
  readonly attempts: PasswordAttempts;
  readonly passwords: PasswordHasher;
  /** The instance's argon2 budget (each check is ~50 ms of a core), shared fairly between visitors and tenants. */
  readonly checks: PasswordCheckGate;
}

type Suffix = '+' | '/go' | undefined;

/**
 * `GET|HEAD /{code}` answered at the node:http level, in front of Fastify and Nest. Nest still
 * builds and wires everything; only these requests skip the framework's per-request hooks
 * (Nest's adapter adds four onRequest hooks and middie to every Fastify route), which measured
 * at well over half of the hot path's cost. Every other path (health, metrics, internal, an
 * unknown shape) goes on to Fastify. Errors leave as the same problem+json as everywhere else.
 *
 * A link with options goes through LinkRules (docs/design.md, "Link options"); `POST /{code}`
 * takes a password form, `/{code}+` is the preview page, `/{code}/go` follows a flagged link past
 * its warning page. A plain link without a query string takes the same path as before options
 * existed: no rule is looked at and nothing more is allocated.
 */
export class RedirectHttpHandler {
  private readonly domains: Set<string>;

  constructor(
    private readonly pipeline: RedirectPipeline,
    private readonly recorder: ClickRecorder,
    private readonly metrics: RedirectMetrics,
    private readonly perIp: KeyedWindowLimiter,
    private readonly global: GlobalRateLimiter,
    /** X-Forwarded-For is believed only from TRUSTED_PROXIES. */
    private readonly addresses: ClientAddressResolver,
    private readonly config: AppConfig,
    private readonly options: LinkOptionParts,
    /** Tenants' own domains and suspended tenants, held in memory (docs/design.md, "Tenants, keys and plans"). */
    private readonly tenants: TenantDirectory,
  ) {
    this.domains = new Set(config.links.domains);
  }

  /** Handles the request and returns true when it is for a link; false leaves it to Fastify. */
  readonly tryHandle = (req: IncomingMessage, res: ServerResponse): boolean => {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') return false;
    const match = CODE_PATH.exec(req.url ?? '');
    if (!match || RESERVED_PATHS.has(firstSegment(match[1]).toLowerCase())) return false;
    const started = performance.now();
    // Known once the code is taken apart: a LINK_NOT_FOUND thrown after that is an orphan visit.
    let id: ShortUrlIdentifier | null = null;
    let ip = '';
    try {
      ip = this.addresses.of(req);
      const perIp = this.perIp.hit(ip);
      if (!perIp.allowed) return this.refuse(req, res, 'ip', perIp.retryAfterSeconds, started);
      const all = this.global.allow();
      if (!all.allowed) return this.refuse(req, res, 'global', all.retryAfterSeconds, started);
      const at: ShortUrlIdentifier = (id = { domain: this.domainOf(req), code: match[1] });
      const suffix = match[2] as Suffix;
      const query = match[3];
      const local = this.pipeline.resolveLocal(at);
      if (local) {
        this.answer(req, res, at, local.link, ip, suffix, query, started);
      } else {
        const client = ip;
        this.pipeline.resolve(at).then(
          ({ link }) => this.answer(req, res, at, link, client, suffix, query, started),
          (error) => this.notFound(req, res, error, at, client, started),
        );
      }
    } catch (error) {
      if (id) this.notFound(req, res, error, id, ip, started);
      else this.problem(req, res, error, started);
    }
    return true;
  };

  private answer(req: IncomingMessage, res: ServerResponse, id: ShortUrlIdentifier, link: CachedLink, ip: string, suffix: Suffix, query: string | undefined, started: number): void {
    const method = req.method;
    if (this.tenants.isSuspended(link.tenantId)) return this.page(req, res, suspendedPage(), started);
    if (suffix === undefined && query === undefined && link.rules === undefined && link.moderation === undefined && method !== 'POST') {
      return this.redirect(req, res, id, link, ip, started);
    }
    try {
      if (suffix === '+') {
        if (method === 'POST') throw notAllowed();
        return this.page(req, res, link.moderation === 'banned' ? blockedPage() : previewPage(link, id.code), started);
      }
      if (method === 'POST') return this.submitPassword(req, res, id, link, ip, suffix === '/go', query, started);
      const decision = this.options.rules.decide(link, {
        address: ip, userAgent: req.headers['user-agent'] ?? '', query, counts: method === 'GET', acknowledged: suffix === '/go', passwordAccepted: false,
      });
      if (decision.kind === 'password') return this.passwordForm(req, res, id, link, started);
      this.act(req, res, id, link, ip, query, decision, false, started);
    } catch (error) {
      this.problem(req, res, error, started);
    }
  }

  /** Carries out a decision of the rules; `afterPost`: the password form was accepted (303, refusals as pages). */
  private act(req: IncomingMessage, res: ServerResponse, id: ShortUrlIdentifier, link: CachedLink, ip: string, query: string | undefined, decision: RedirectDecision, afterPost: boolean, started: number): void {
    switch (decision.kind) {
      case 'blocked':
        return this.page(req, res, blockedPage(), started);
      case 'warning':
        return this.page(req, res, warningPage(link, `/${id.code}/go${query ? `?${query.split('&').map(encodeQueryPart).join('&')}` : ''}`), started);
      case 'password':
        return this.page(req, res, passwordPage(false, link.moderation === 'flagged'), started);
      case 'exhausted':
        return this.refusal(req, res, exhausted(), afterPost, started);
      case 'limited':
        this.metrics.rateLimited.inc({ scope: 'link' });
        return this.refusal(req, res, new DomainError(ErrorCode.RATE_LIMITED, 'too many redirects of this link from this address', { retryAfterSeconds: decision.retryAfterSeconds }), afterPost, started);
      case 'redirect': {
        const status = afterPost ? 303 : link.redirectType;
        if (!decision.reserve) return this.redirectTo(req, res, id, link, ip, decision.location, decision.variant, status, started);
        this.options.quota.reserve(link, id, (outcome) => {
          if (outcome === 'granted') this.redirectTo(req, res, id, link, ip, decision.location, decision.variant, status, started);
          else if (outcome === 'exhausted') this.refusal(req, res, exhausted(), afterPost, started);
          else this.problem(req, res, new DomainError(ErrorCode.DEPENDENCY_UNAVAILABLE, 'the click counter of this link is unreachable; retry shortly', { retryAfterSeconds: 1 }), started);
        });
      }
    }
  }

  /** The form, unless the link has no click left (max clicks comes before the password). */
  private passwordForm(req: IncomingMessage, res: ServerResponse, id: ShortUrlIdentifier, link: CachedLink, started: number): void {
    const form = () => this.page(req, res, passwordPage(false, link.moderation === 'flagged'), started);
    if (link.rules?.maxClicks === undefined) return form();
    this.options.quota.isExhausted(link, id).then(
      (gone) => (gone ? this.problem(req, res, exhausted(), started) : form()),
      () => form(), // the counter is checked again when the password is sent
    );
  }

  /**
   * `POST /{code}` with `password=` (application/x-www-form-urlencoded, at most 1 KiB): moderation,
   * then max clicks, then the form, then one of the visitor's attempts on this link, reserved before
   * the password is evaluated (so that guesses in flight count), then a slot of the instance's fair
   * argon2 budget (docs/design.md, "Link options"), then the password itself (argon2 on the thread
   * pool, never on the event loop), then the rest of the rules. A right password gives its attempt
   * back. A click is taken only now.
   */
  private submitPassword(req: IncomingMessage, res: ServerResponse, id: ShortUrlIdentifier, link: CachedLink, ip: string, acknowledged: boolean, query: string | undefined, started: number): void {
    if (link.moderation === 'banned') return this.page(req, res, blockedPage(), started);
    if (link.moderation === 'flagged' && !acknowledged) return this.act(req, res, id, link, ip, query, { kind: 'warning' }, true, started);
    const hash = link.rules?.passwordHash;
    if (hash === undefined) throw notAllowed();
    const { quota, attempts, passwords, rules, checks } = this.options;
    (async () => {
      if (link.rules?.maxClicks !== undefined && (await quota.isExhausted(link, id))) return this.refusal(req, res, exhausted(), true, started);
      const password = new URLSearchParams(await readForm(req)).get('password') ?? '';
      const attempt = await attempts.reserve(link.id, ip);
      if (!attempt.allowed) {
        this.metrics.rateLimited.inc({ scope: 'password' });
        const { retryAfterSeconds } = attempt;
        const refused = new DomainError(ErrorCode.RATE_LIMITED, 'too many wrong passwords for this link; try again later', { retryAfterSeconds });
        return this.refusal(req, res, refused, true, started);
      }
      let accepted = false;
      if (password.length > 0 && password.length <= 1024) {
        const slot = await checks.acquire(link.tenantId, ip);
        if (!slot.allowed) {
          await attempt.giveBack(); // nothing was evaluated
          this.metrics.rateLimited.inc({ scope: slot.reason === 'visitor' ? 'password_visitor' : 'password_busy' });
          const why =
            slot.reason === 'visitor' ? 'too many password checks from this address; try again later' : 'too many password checks in progress; retry shortly';
          return this.refusal(req, res, new DomainError(ErrorCode.RATE_LIMITED, why, { retryAfterSeconds: slot.retryAfterSeconds }), true, started);
        }
        try {
          accepted = await passwords.verify(hash, password);
        } finally {
          slot.done();
        }
      }
      if (!accepted) {
        if (wantsHtml(req)) return this.page(req, res, passwordPage(true, link.moderation === 'flagged'), started);
        return this.problem(req, res, new DomainError(ErrorCode.PASSWORD_INCORRECT, 'the password is not right'), started);
      }
      await attempt.giveBack();
      const decision = rules.decide(link, { address: ip, userAgent: req.headers['user-agent'] ?? '', query, counts: true, acknowledged: true, passwordAccepted: true });
      this.act(req, res, id, link, ip, query, decision, true, started);
    })().catch((error) => this.problem(req, res, error, started));
  }

  /** A plain link: the hot path, exactly as before link options. */
  private redirect(req: IncomingMessage, res: ServerResponse, id: ShortUrlIdentifier, link: CachedLink, ip: string, started: number): void {
    if (req.method === 'GET') this.recorder.record(req, link, ip, null, id);
    this.metrics.status(link.redirectType);
    // Browsers must not cache a 302, or later clicks would never reach us.
    res.writeHead(link.redirectType, { location: link.targetUrl, 'cache-control': link.redirectType === 302 ? 'private, no-store' : 'public, max-age=300', 'content-length': '0' });
    res.end();
    this.metrics.duration.observe((performance.now() - started) / 1000);
  }

  /**
   * A redirect decided by the rules. Only a plain link's 301 may be cached by anyone: an answer
   * that depends on the visitor (country, device, variant) or on a count must reach us every time.
   */
  private redirectTo(req: IncomingMessage, res: ServerResponse, id: ShortUrlIdentifier, link: CachedLink, ip: string, location: string, variant: number | null, status: number, started: number): void {
    // A click only for a redirect actually sent (never HEAD, a page or a refusal), with the variant served.
    if (req.method !== 'HEAD') this.recorder.record(req, link, ip, variant, id);
    this.metrics.status(status);
    res.writeHead(status, { location, 'cache-control': status === 301 && link.rules === undefined ? 'public, max-age=300' : 'private, no-store', 'content-length': '0' });
    res.end();
    this.metrics.duration.observe((performance.now() - started) / 1000);
  }

  /**
   * A code that does not exist is an orphan visit for analytics (docs/analytics.md); then the usual
   * problem. A disabled link answers exactly as a code that does not exist, so that a visitor cannot
   * tell it exists; it is still the tenant's link, so its visit is no orphan (docs/design.md,
   * "Security model").
   */
  private notFound(req: IncomingMessage, res: ServerResponse, error: unknown, id: ShortUrlIdentifier, ip: string, started: number): void {
    const code = (error as DomainError)?.code;
    if (req.method === 'GET' && code === ErrorCode.LINK_NOT_FOUND) this.recorder.recordOrphan(req, id, ip);
    this.problem(req, res, code === ErrorCode.LINK_DISABLED ? unknownLink(id) : error, started);
  }


  private page(req: IncomingMessage, res: ServerResponse, page: Page, started: number): void {
    this.metrics.status(page.status);
    sendPage(res, page, req.method === 'HEAD');
    this.metrics.duration.observe((performance.now() - started) / 1000);
  }

  /** A refusal after a form was sent goes back to a browser as a page; everything else as problem+json. */
  private refusal(req: IncomingMessage, res: ServerResponse, error: DomainError, asPage: boolean, started: number): void {
    if (!asPage || !wantsHtml(req)) return this.problem(req, res, error, started);
    const problem = problemFor(error, req.url);
    this.page(req, res, refusalPage(problem.status, error.message, retryAfterFor(error, problem.status)), started);
  }

  private refuse(req: IncomingMessage, res: ServerResponse, scope: 'ip' | 'global', retryAfterSeconds: number, started: number): true {
    this.metrics.rateLimited.inc({ scope });
    const message = scope === 'ip' ? 'too many redirects from this address' : 'the service is at its request limit';
    this.problem(req, res, new DomainError(ErrorCode.RATE_LIMITED, message, { retryAfterSeconds }), started);
    return true;
  }

  private problem(req: IncomingMessage, res: ServerResponse, error: unknown, started: number): void {
    if (res.headersSent) return;
    const problem = problemFor(error, req.url);
    this.metrics.status(problem.status);
    const headers: Record<string, string> = { 'content-type': 'application/problem+json' };
    const retryAfter = retryAfterFor(error, problem.status);
    if (retryAfter) headers['retry-after'] = retryAfter;
    if (problem.status === 405) headers.allow = 'GET, HEAD';
    // A body too large is not read to its end: the connection goes with the answer.
    if (problem.status === 413) headers.connection = 'close';
    const body = JSON.stringify(problem);
    headers['content-length'] = String(Buffer.byteLength(body));
    res.writeHead(problem.status, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
    this.metrics.duration.observe((performance.now() - started) / 1000);
  }

  /**
   * The link's host: a configured short domain or a tenant's, else the default domain (e.g. when
   * reached by IP). `GO.acme.test.:443` is `go.acme.test`: a variant of a tenant's host must not
   * fall through to the default domain, where another tenant may hold the same code.
   */
  private domainOf(req: IncomingMessage): string {
    const host = req.headers.host;
    if (host) {
      const h = normalizeHost(host);
      if (this.domains.has(h) || this.tenants.isTenantDomain(h)) return h;
    }
    return this.config.links.defaultDomain;
  }
}

const exhausted = () => new DomainError(ErrorCode.LINK_EXHAUSTED, 'this link has reached its maximum number of clicks');
const notAllowed = () => new DomainError(ErrorCode.METHOD_NOT_ALLOWED, 'only a password-protected link takes a POST (its password form)');

/** Browsers ask for HTML; API clients and scripts get problem+json. */
const wantsHtml = (req: IncomingMessage) => (req.headers.accept ?? '').includes('text/html');

/** An error problemFor turns into a 4xx with Fastify's stable codes (PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE, BAD_REQUEST). */
const httpError = (statusCode: number, message: string) => Object.assign(new Error(message), { statusCode });

/** The body of a password form: urlencoded, at most MAX_FORM_BYTES, read without the framework. */
function readForm(req: IncomingMessage): Promise<string> {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return Promise.reject(httpError(415, 'the password form is sent as application/x-www-form-urlencoded'));
  if (Number(req.headers['content-length'] ?? 0) > MAX_FORM_BYTES) return Promise.reject(httpError(413, `the form is larger than ${MAX_FORM_BYTES} bytes`));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (error: Error) => {
      req.off('data', onData);
      req.off('end', onEnd);
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_FORM_BYTES) return fail(httpError(413, `the form is larger than ${MAX_FORM_BYTES} bytes`));
      chunks.push(chunk);
    };
    const onEnd = () => resolve(Buffer.concat(chunks).toString('utf8'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', fail);
  });
}
