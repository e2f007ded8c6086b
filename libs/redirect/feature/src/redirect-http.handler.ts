import type { IncomingMessage, ServerResponse } from 'http';
import { performance } from 'perf_hooks';
import type { AppConfig } from '@shortlink/config';
import { DomainError, ErrorCode, KeyedWindowLimiter, normalizeHost } from '@shortlink/core';
import { CachedLink, LinkResolver, PasswordHasher, RESERVED_PATHS, ShortUrlIdentifier, unknownLink } from '@shortlink/links-domain';
import { encodeQueryPart, LinkRules, PasswordCookies, QrScans, RedirectDecision } from '@shortlink/redirect-rules';
import { ClickQuota, GlobalRateLimiter, PasswordAttempts, PasswordCheckGate } from '@shortlink/read-path';
import { ClientAddressResolver, FrontRoute, problemFor, retryAfterFor } from '@shortlink/nest-platform';
import { CHALLENGE_PATH_PREFIX, domainConversionParam, hstsHeader, TenantDirectory } from '@shortlink/tenants-domain';
import { isBotUserAgent, isLinkPreviewer } from '@shortlink/visitors-domain';
import { ClickIds, type ClickSource, withQueryParam } from '@shortlink/clicks-domain';
import { ClickRecorder } from './click-recorder';
import { DomainFiles, WellKnownFile } from './domain-files';
import { PageText } from './page-text';
import {
  appPage,
  blockedPage,
  brokenPage,
  errorPage,
  exhaustedPage,
  expiredPage,
  limitedPage,
  notFoundPage,
  Page,
  PageContext,
  passwordPage,
  previewPage,
  sendPage,
  suspendedPage,
  unavailablePage,
  warningPage,
} from './pages';
import { RedirectMetrics } from './redirect.metrics';
import { sendSocialCard, SocialCards } from './social-card';
import { VisitorPages } from './visitor-pages';

/**
 * A code, optionally followed by `+` (the preview page) or `/go` (past a flagged link's warning),
 * optionally with a query string: `/abc1234`, `/abc1234+`, `/abc1234/go?x=1`. Codes an import kept
 * (docs/design.md, "Import and export") may be 1-2 characters or have segments: `/1`,
 * `/blog/2024/launch`; a last segment `go` is the suffix (no code ends in one), and the lookahead
 * holds the code to 64 characters.
 */
const CODE_PATH =
  /^\/(?=[A-Za-z0-9_/-]{1,64}(?:\/go|\+)?(?:\?|$))([A-Za-z0-9][A-Za-z0-9_-]*(?:\/(?!go(?:\?|$))[A-Za-z0-9][A-Za-z0-9_-]*)*)(\+|\/go)?(?:\?(.*))?$/;
/**
 * The URL a link's QR code encodes (docs/design.md, "QR codes"): the code, then the segment `~`,
 * optionally `/go` and a query string: `/abc1234/~`, `/blog/2024/launch/~/go?x=1`. No code has a
 * segment `~` (segments start with a letter or digit), a cookie of `Path=/{code}` reaches it, and
 * the marker lives in the path, so the query forwarded to the target is the visitor's own.
 */
const QR_PATH = /^\/(?=[A-Za-z0-9_/-]{1,64}\/~(?:\/go)?(?:\?|$))([A-Za-z0-9][A-Za-z0-9_-]*(?:\/[A-Za-z0-9][A-Za-z0-9_-]*)*)\/~(\/go)?(?:\?(.*))?$/;
/** Shlink's REST API on a short domain (ShlinkRelay), not a code. */
const SHLINK_API_PATH = /^rest\/v3(?:\/|$)/;
/** A path whose first segment is reserved (`/docs/…`) is not a code. */
const firstSegment = (code: string) => {
  const slash = code.indexOf('/');
  return slash < 0 ? code : code.slice(0, slash);
};

/** `/`, `/robots.txt` and the well-known files of app links, with a query string or none (docs/design.md, "Domain settings"). */
const DOMAIN_FILE_PATH = /^\/(robots\.txt|\.well-known\/(?:apple-app-site-association|assetlinks\.json))?(?:\?.*)?$/;

/** The HTTP token of a domain's ownership check (docs/design.md, "Custom domains and TLS"): base64url, as the domain makes it. */
const CHALLENGE_PATH = new RegExp(`^${CHALLENGE_PATH_PREFIX.replace(/[./]/g, '\\$&')}([A-Za-z0-9_-]{16,128})$`);

/** Host headers whose normalized form is kept (a few per served domain, as clients write them). */
const MAX_HOSTS = 1024;
/** Longer Host headers are normalized every time, not kept (a DNS name and a port fit). */
const MAX_HOST_LENGTH = 262;

/** A password form's body: `password=` and at most 128 characters, percent-encoded up to 3 bytes each. */
const MAX_FORM_BYTES = 1024;

/** What the link options need besides the read path (docs/design.md, "Link options"). */
export interface LinkOptionParts {
  /** The rules, with the per-link visitor limit they count in (VisitorLimit, shared with the other instances in the background). */
  readonly rules: LinkRules;
  readonly quota: ClickQuota;
  readonly attempts: PasswordAttempts;
  readonly passwords: PasswordHasher;
  /** The instance's argon2 budget (each check is ~50 ms of a core), shared fairly between visitors and tenants. */
  readonly checks: PasswordCheckGate;
  /** The remembered password: a signed cookie per link (docs/design.md, "Link options"). */
  readonly cookies: PasswordCookies;
  /** Makes the click ids of links with conversion tracking (docs/design.md, "Conversions"). */
  readonly clickIds: ClickIds;
}

/** What the redirect handler works with. */
export interface RedirectHandlerParts {
  readonly links: LinkResolver;
  readonly recorder: ClickRecorder;
  readonly metrics: RedirectMetrics;
  /** Redirects per client address and minute (RATE_LIMIT_PER_IP_PER_MINUTE). */
  readonly perIp: KeyedWindowLimiter;
  readonly global: GlobalRateLimiter;
  /** X-Forwarded-For is believed only from TRUSTED_PROXIES. */
  readonly addresses: ClientAddressResolver;
  readonly config: AppConfig;
  readonly options: LinkOptionParts;
  /** Tenants' own domains and suspended tenants, held in memory (docs/design.md, "Tenants, keys and plans"). */
  readonly tenants: TenantDirectory;
  /** Pages and domain settings for browsers (docs/design.md, "Pages", "Domain settings"). */
  readonly pages: VisitorPages;
  /** robots.txt and the well-known files of each domain. */
  readonly files: DomainFiles;
  /** Which visits by a QR URL count as scans: a few per visitor and minute (docs/design.md, "QR codes"). */
  readonly scans: QrScans;
  /** Where each tenant sends visitors of its broken links, held in memory (docs/design.md, "Trust and safety"); none: to the target. */
  readonly brokenLinks?: BrokenLinkFallbacks;
}

/** A tenant's choice for visitors of its broken links: the target all the same, a page, or a URL of its own. */
export interface BrokenLinkFallbacks {
  fallbackFor(tenantId: string): { readonly mode: 'target' | 'page' | 'url'; readonly url: string | null };
}

type Suffix = '+' | '/go' | undefined;

/** One request on its way through the handler's steps. */
interface Visit {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** performance.now() when the request came in. */
  readonly started: number;
  readonly suffix: Suffix;
  /** The raw query string, without `?`. */
  readonly query: string | undefined;
  /** `qr`: reached by the URL of the link's QR code (`/{code}/~`). */
  readonly source: ClickSource;
  /** The client address (X-Forwarded-For believed only from TRUSTED_PROXIES); '' until read. */
  address: string;
  /** The short URL asked for, once the code is taken apart: a LINK_NOT_FOUND after that is an orphan visit. */
  id: ShortUrlIdentifier | null;
}

/**
 * `GET|HEAD|POST /{code}` answered at the node:http level, in front of Fastify and Nest. Nest still
 * builds and wires everything; only these requests skip the framework's per-request hooks
 * (Nest's adapter adds four onRequest hooks and middie to every Fastify route), which measured
 * at well over half of the hot path's cost. Every other path (health, metrics, internal, an
 * unknown shape) goes on to Fastify. Errors leave as the same problem+json as everywhere else.
 *
 * A link with options goes through LinkRules (docs/design.md, "Link options"); `POST /{code}`
 * takes a password form, `/{code}+` is the preview page, `/{code}/go` follows a flagged link past
 * its warning page. A plain link without a query string takes the same path as before options
 * existed: no rule is looked at and nothing more is allocated than the visit and its identifier.
 */
export class RedirectHttpHandler {
  private readonly links: LinkResolver;
  private readonly recorder: ClickRecorder;
  private readonly metrics: RedirectMetrics;
  private readonly perIp: KeyedWindowLimiter;
  private readonly global: GlobalRateLimiter;
  private readonly addresses: ClientAddressResolver;
  private readonly config: AppConfig;
  private readonly options: LinkOptionParts;
  private readonly tenants: TenantDirectory;
  private readonly pages: VisitorPages;
  private readonly files: DomainFiles;
  private readonly scans: QrScans;
  private readonly brokenLinks: BrokenLinkFallbacks | undefined;
  /** Social cards rendered once per cached link (docs/design.md, "Link options"). */
  private readonly cards = new SocialCards();
  private readonly domains: Set<string>;
  /** Host headers in their normalized form (normalizeHost is a pure function; a visitor's Host repeats): emptied when full. */
  private readonly hosts = new Map<string, string>();

  constructor(parts: RedirectHandlerParts) {
    ({ links: this.links, recorder: this.recorder, metrics: this.metrics, perIp: this.perIp, global: this.global } = parts);
    ({ addresses: this.addresses, config: this.config, options: this.options, tenants: this.tenants } = parts);
    ({ pages: this.pages, files: this.files, scans: this.scans, brokenLinks: this.brokenLinks } = parts);
    this.domains = new Set(parts.config.links.domains);
  }

  /** The redirect itself: a code, `/{code}+` (preview) or `/{code}/go` (past a warning), with a query string or none. */
  @FrontRoute({ methods: ['GET', 'HEAD', 'POST'], path: '/{code}', pattern: CODE_PATH })
  handle(req: IncomingMessage, res: ServerResponse, match: RegExpExecArray): boolean {
    return this.visit(req, res, match, 'link');
  }

  /**
   * The URL of a link's QR code, `/{code}/~` (with `/go` and a query string as above): answered
   * exactly as `/{code}` (rules, password, limits, caching), its click counted as `qr`. A route of
   * its own after the redirect's, so that a path without the marker meets nothing new.
   */
  @FrontRoute({ methods: ['GET', 'HEAD', 'POST'], path: '/{code}/~', pattern: QR_PATH })
  handleQr(req: IncomingMessage, res: ServerResponse, match: RegExpExecArray): boolean {
    return this.visit(req, res, match, 'qr');
  }

  /** A visit of a code (match: code, suffix, query). */
  private visit(req: IncomingMessage, res: ServerResponse, match: RegExpExecArray, source: ClickSource): boolean {
    if (RESERVED_PATHS.has(firstSegment(match[1]).toLowerCase()) || SHLINK_API_PATH.test(match[1])) return false;
    const visit: Visit = { req, res, started: performance.now(), suffix: match[2] as Suffix, query: match[3], source, address: '', id: null };
    try {
      visit.address = this.addresses.of(req);
      const perIp = this.perIp.hit(visit.address);
      if (!perIp.allowed) return this.refuse(visit, 'ip', perIp.retryAfterSeconds);
      const all = this.global.allow();
      if (!all.allowed) return this.refuse(visit, 'global', all.retryAfterSeconds);
      const domain = this.servedDomainOf(req);
      if (domain === null) return this.notServed(visit);
      this.strictTransport(req, res, domain);
      const id: ShortUrlIdentifier = (visit.id = { domain, code: match[1] });
      const local = this.links.resolveLocal(id);
      if (local) {
        this.answer(visit, local.link);
      } else {
        this.links.resolve(id).then(
          ({ link }) => this.answer(visit, link),
          (error) => this.notFound(visit, error),
        );
      }
    } catch (error) {
      if (visit.id) this.notFound(visit, error);
      else this.refused(visit, error);
    }
    return true;
  }

  /**
   * What a domain serves besides its links (docs/design.md, "Domain settings"): `/` goes to the
   * domain's root redirect (a browser gets the 404 page without one); `robots.txt`; the well-known
   * files of app links. A domain without them leaves the request to the framework (its 404), as before.
   */
  @FrontRoute({ methods: ['GET', 'HEAD'], path: '/, /robots.txt, /.well-known/{apple-app-site-association,assetlinks.json}', pattern: DOMAIN_FILE_PATH })
  domainFile(req: IncomingMessage, res: ServerResponse, match: RegExpExecArray): boolean {
    const visit: Visit = { req, res, started: performance.now(), suffix: undefined, query: undefined, source: 'link', address: '', id: null };
    const domain = this.servedDomainOf(req);
    if (domain === null) {
      this.notServed(visit);
      return true;
    }
    this.strictTransport(req, res, domain);
    const file = match[1];
    if (file === undefined) {
      const root = this.pages.settingsOf(domain)?.rootRedirect;
      if (root) this.domainRedirect(visit, root, false);
      else if (this.pages.wantsPage(req)) this.page(visit, notFoundPage);
      else return false;
    } else if (file === 'robots.txt') {
      this.files.robots(domain).then(
        (text) => this.sendFile(visit, 'text/plain; charset=utf-8', text),
        (error) =>
          this.problem(visit, new DomainError(ErrorCode.SHARD_UNAVAILABLE, 'robots.txt cannot be made right now', { retryAfterSeconds: 5 }, { cause: error })),
      );
    } else {
      const json = this.files.wellKnown(domain, file.slice('.well-known/'.length) as WellKnownFile);
      if (json === null) return false;
      this.sendFile(visit, 'application/json', json);
    }
    return true;
  }

  /**
   * The token of a tenant domain's HTTP ownership check, on that domain (docs/design.md, "Custom
   * domains and TLS"), whatever its status: a re-check of a verified domain reads it too. Any other
   * token or host is left to the framework (its 404).
   */
  @FrontRoute({ methods: ['GET', 'HEAD'], path: `${CHALLENGE_PATH_PREFIX}{token}`, pattern: CHALLENGE_PATH })
  challenge(req: IncomingMessage, res: ServerResponse, match: RegExpExecArray): boolean {
    const host = req.headers.host;
    if (!host || this.tenants.challengeTokenOf(normalizeHost(host)) !== match[1]) return false;
    this.metrics.status(200);
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(match[1].length), 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : match[1]);
    return true;
  }

  /**
   * A tenant's domain that is not verified serves nothing (docs/design.md, "Custom domains and TLS"):
   * the 404 of an unknown code, in the service's look, whatever its links and settings.
   */
  private notServed(visit: Visit): true {
    if (this.pages.wantsPage(visit.req)) this.page(visit, notFoundPage);
    else this.problem(visit, new DomainError(ErrorCode.LINK_NOT_FOUND, 'this domain serves no links: its ownership is not verified'));
    return true;
  }

  /** The domain's HSTS setting, on an answer over HTTPS (RFC 6797: never over plain HTTP). */
  private strictTransport(req: IncomingMessage, res: ServerResponse, domain: string): void {
    const hsts = this.pages.settingsOf(domain)?.hsts;
    if (hsts && this.addresses.isHttps(req)) res.setHeader('strict-transport-security', hstsHeader(hsts));
  }

  /** A domain's file: short-lived in shared caches, so that a change of the settings is seen soon after every instance has it. */
  private sendFile(visit: Visit, type: string, body: string): void {
    const { req, res } = visit;
    if (res.headersSent) return;
    this.metrics.status(200);
    res.writeHead(200, {
      'content-type': type,
      'content-length': String(Buffer.byteLength(body)),
      'cache-control': 'public, max-age=60',
      'x-content-type-options': 'nosniff',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    this.metrics.duration.observe((performance.now() - visit.started) / 1000);
  }

  private answer(visit: Visit, link: CachedLink): void {
    const { req, suffix, query } = visit;
    const method = req.method;
    if (this.tenants.isSuspended(link.tenantId)) return this.page(visit, suspendedPage);
    if (
      link.social !== undefined &&
      suffix === undefined &&
      method !== 'POST' &&
      link.moderation === undefined &&
      isLinkPreviewer(req.headers['user-agent'] ?? '')
    ) {
      return this.card(visit, link);
    }
    if (
      suffix === undefined &&
      query === undefined &&
      (link.rules === undefined || onlyClickId(link.rules)) &&
      link.moderation === undefined &&
      link.broken === undefined &&
      method !== 'POST'
    ) {
      return this.redirect(visit, link);
    }
    try {
      if (suffix === '+') {
        if (method === 'POST') throw notAllowed();
        if (link.moderation === 'banned') return this.page(visit, blockedPage);
        return this.page(visit, (t, lang) => previewPage(t, lang, link, visit.id!.code));
      }
      // A broken link (its health, in the cached link) past any warning: the tenant's fallback, when it chose one.
      if (link.broken !== undefined && method !== 'POST' && (link.moderation === undefined || (link.moderation === 'flagged' && suffix === '/go'))) {
        const fallback = this.brokenLinks?.fallbackFor(link.tenantId);
        if (fallback?.mode === 'url' && fallback.url) return this.domainRedirect(visit, fallback.url, false);
        if (fallback?.mode === 'page') return this.page(visit, (t) => brokenPage(t, link));
      }
      if (method === 'POST') return this.submitPassword(visit, link);
      const userAgent = req.headers['user-agent'] ?? '';
      const acknowledged = suffix === '/go';
      const counts = method === 'GET';
      // A remembered right password (its cookie) lets the visitor through the form; every other rule still applies.
      const passwordAccepted = link.rules?.passwordHash !== undefined && this.options.cookies.accepts(req.headers.cookie, link, visit.id!, Date.now());
      const acceptLanguage = req.headers['accept-language'];
      const decision = this.options.rules.decide(link, { address: visit.address, userAgent, query, acceptLanguage, counts, acknowledged, passwordAccepted });
      if (decision.kind === 'password') return this.passwordForm(visit, link);
      this.act(visit, link, decision, false);
    } catch (error) {
      this.refused(visit, error);
    }
  }

  /** Carries out a decision of the rules; `afterPost`: the password form was accepted (303). */
  private act(visit: Visit, link: CachedLink, decision: RedirectDecision, afterPost: boolean): void {
    const { query } = visit;
    switch (decision.kind) {
      case 'blocked':
        return this.page(visit, blockedPage);
      case 'warning': {
        const continuePath = `/${visit.id!.code}${visit.source === 'qr' ? '/~' : ''}/go${query ? `?${query.split('&').map(encodeQueryPart).join('&')}` : ''}`;
        return this.page(visit, (t) => warningPage(t, link, continuePath, visit.id!.code));
      }
      case 'password':
        return this.page(visit, (t) => passwordPage(t, false, link.moderation === 'flagged'));
      case 'exhausted':
        return this.refused(visit, exhausted());
      case 'limited':
        return this.visitorLimited(visit, decision.retryAfterSeconds);
      case 'redirect': {
        const status = afterPost ? 303 : link.redirectType;
        if (!decision.reserve) return this.redirectTo(visit, link, decision, status);
        this.options.quota.reserve(link, visit.id!, (outcome) => {
          if (outcome === 'granted') this.redirectTo(visit, link, decision, status);
          else if (outcome === 'exhausted') this.refused(visit, exhausted());
          else this.refused(visit, counterUnreachable());
        });
      }
    }
  }

  /** 429 of the per-link visitor limit (`clicksPerIpPerMinute`). */
  private visitorLimited(visit: Visit, retryAfterSeconds: number): void {
    this.metrics.rateLimited.inc({ scope: 'link' });
    this.refused(visit, new DomainError(ErrorCode.RATE_LIMITED, 'too many redirects of this link from this address', { retryAfterSeconds }));
  }

  /** The form, unless the link has no click left (max clicks comes before the password). */
  private passwordForm(visit: Visit, link: CachedLink): void {
    const form = () => this.page(visit, (t) => passwordPage(t, false, link.moderation === 'flagged'));
    if (link.rules?.maxClicks === undefined) return form();
    this.options.quota.isExhausted(link, visit.id!).then(
      (gone) => (gone ? this.refused(visit, exhausted()) : form()),
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
  private submitPassword(visit: Visit, link: CachedLink): void {
    const { req, address: ip } = visit;
    if (link.moderation === 'banned') return this.page(visit, blockedPage);
    if (link.moderation === 'flagged' && visit.suffix !== '/go') return this.act(visit, link, { kind: 'warning' }, true);
    const hash = link.rules?.passwordHash;
    if (hash === undefined) throw notAllowed();
    const { quota, attempts, passwords, rules, checks } = this.options;
    (async () => {
      if (link.rules?.maxClicks !== undefined && (await quota.isExhausted(link, visit.id!))) return this.refused(visit, exhausted());
      const password = new URLSearchParams(await readForm(req)).get('password') ?? '';
      const attempt = await attempts.reserve(link.id, ip);
      if (!attempt.allowed) {
        this.metrics.rateLimited.inc({ scope: 'password' });
        const { retryAfterSeconds } = attempt;
        return this.refused(visit, new DomainError(ErrorCode.RATE_LIMITED, 'too many wrong passwords for this link; try again later', { retryAfterSeconds }));
      }
      let accepted = false;
      if (password.length > 0 && password.length <= 1024) {
        const slot = await checks.acquire(link.tenantId, ip);
        if (!slot.allowed) {
          await attempt.giveBack(); // nothing was evaluated
          this.metrics.rateLimited.inc({ scope: slot.reason === 'visitor' ? 'password_visitor' : 'password_busy' });
          const why =
            slot.reason === 'visitor' ? 'too many password checks from this address; try again later' : 'too many password checks in progress; retry shortly';
          return this.refused(visit, new DomainError(ErrorCode.RATE_LIMITED, why, { retryAfterSeconds: slot.retryAfterSeconds }));
        }
        try {
          accepted = await passwords.verify(hash, password);
        } finally {
          slot.done();
        }
      }
      if (!accepted) {
        if (this.pages.wantsPage(req)) return this.page(visit, (t) => passwordPage(t, true, link.moderation === 'flagged'));
        return this.problem(visit, new DomainError(ErrorCode.PASSWORD_INCORRECT, 'the password is not right'));
      }
      await attempt.giveBack();
      this.rememberPassword(visit, link);
      const userAgent = req.headers['user-agent'] ?? '';
      const acceptLanguage = req.headers['accept-language'];
      const decision = rules.decide(link, {
        address: ip,
        userAgent,
        query: visit.query,
        acceptLanguage,
        counts: true,
        acknowledged: true,
        passwordAccepted: true,
      });
      this.act(visit, link, decision, true);
    })().catch((error) => this.refused(visit, error));
  }

  /**
   * The cookie of a right password (docs/design.md, "Link options"): HttpOnly, SameSite=Lax, Secure
   * when the visitor reached us over https, sent back only to this link's path.
   */
  private rememberPassword(visit: Visit, link: CachedLink): void {
    const cookie = this.options.cookies.issue(link, visit.id!, Date.now());
    if (cookie === null || visit.res.headersSent) return;
    const secure = this.addresses.isHttps(visit.req) ? '; Secure' : '';
    const attributes = `Path=/${visit.id!.code}; Max-Age=${cookie.maxAgeSeconds}; HttpOnly; SameSite=Lax${secure}`;
    visit.res.setHeader('set-cookie', `${cookie.name}=${cookie.value}; ${attributes}`);
  }

  /**
   * A link's social card for an unfurling bot (docs/design.md, "Link options"): recorded like the
   * redirect it replaces (a bot's click), taking no click of maxClicks. A password link's card leads
   * to the short URL (its form), never to the target.
   */
  private card(visit: Visit, link: CachedLink): void {
    const { req } = visit;
    const id = visit.id!;
    if (req.method === 'GET') this.record(visit, link, null);
    this.metrics.status(200);
    const target = link.rules?.passwordHash === undefined ? link.targetUrl : null;
    const card = this.cards.cardOf(link, link.social!, this.addresses.isHttps(req), id.domain, id.code, target);
    sendSocialCard(visit.res, card, req.method === 'HEAD');
    this.metrics.duration.observe((performance.now() - visit.started) / 1000);
  }

  /** The plain path with a click id: one block through the kept cipher, no I/O; never cached (the id is one click's). */
  private trackedRedirect(visit: Visit, link: CachedLink, param: string): void {
    const { req, res } = visit;
    const clickId = this.options.clickIds.issue(link.id, Date.now());
    if (req.method === 'GET') this.record(visit, link, null, clickId ?? undefined);
    this.metrics.status(link.redirectType);
    res.writeHead(link.redirectType, {
      location: clickId === null ? link.targetUrl : withQueryParam(link.targetUrl, param, clickId),
      'cache-control': 'private, no-store',
      'content-length': '0',
    });
    res.end();
    this.metrics.duration.observe((performance.now() - visit.started) / 1000);
  }

  /**
   * The click id parameter of the domain the visit came by, when its owner turned conversion
   * tracking on for all its links (domain settings, held in memory: a Map read, and none while no
   * domain has settings).
   */
  private domainClickIdParam(visit: Visit): string | undefined {
    return domainConversionParam(this.pages.settingsOf(this.visitDomain(visit)));
  }

  /**
   * A plain link: the hot path, exactly as before link options; with conversion tracking (the link's
   * only rule, or its domain's setting) the same path plus a click id (docs/design.md, "Conversions").
   */
  private redirect(visit: Visit, link: CachedLink): void {
    const { req, res } = visit;
    const param = link.rules?.clickIdParam ?? this.domainClickIdParam(visit);
    if (param !== undefined) return this.trackedRedirect(visit, link, param);
    if (req.method === 'GET') this.record(visit, link, null);
    this.metrics.status(link.redirectType);
    // Browsers must not cache a 302, or later clicks would never reach us.
    res.writeHead(link.redirectType, {
      location: link.targetUrl,
      'cache-control': link.redirectType === 302 ? 'private, no-store' : 'public, max-age=300',
      'content-length': '0',
    });
    res.end();
    this.metrics.duration.observe((performance.now() - visit.started) / 1000);
  }

  /**
   * A redirect decided by the rules. Only a plain link's 301 may be cached by anyone: an answer
   * that depends on the visitor (country, device, variant) or on a count must reach us every time.
   */
  private redirectTo(visit: Visit, link: CachedLink, decision: RedirectDecision & { kind: 'redirect' }, status: number): void {
    const { req, res } = visit;
    const { variant, app } = decision;
    // Conversion tracking: a click id for this click, made in the process (no I/O), passed to the target (docs/design.md, "Conversions").
    // The link's own setting wins; else its domain's (docs/analytics.md, "Conversions").
    const param = link.rules?.clickIdParam ?? this.domainClickIdParam(visit);
    const clickId = param === undefined ? null : this.options.clickIds.issue(link.id, Date.now());
    const location = clickId === null ? decision.location : withQueryParam(decision.location, param!, clickId);
    // A click only for a redirect actually sent, or the app page that stands for it (never HEAD, another page or a refusal), with the variant served.
    if (req.method !== 'HEAD') this.record(visit, link, variant, clickId ?? undefined);
    // An app URL scheme: a browser gets the app page, whose fallback is `location` (docs/design.md, "Link options").
    if (app !== undefined && this.pages.wantsPage(req) && !isBotUserAgent(req.headers['user-agent'] ?? '')) {
      return this.page(visit, (t) => appPage(t, app, location));
    }
    this.metrics.status(status);
    res.writeHead(status, {
      location,
      // A click id is one click's: never cached.
      'cache-control': status === 301 && link.rules === undefined && clickId === null ? 'public, max-age=300' : 'private, no-store',
      'content-length': '0',
    });
    res.end();
    this.metrics.duration.observe((performance.now() - visit.started) / 1000);
  }

  /**
   * The click of a redirect sent (or of what stands for it). By the QR URL it is a scan while the
   * visitor's scans of the link in this minute allow (docs/design.md, "QR codes"), else a click by
   * `link` (decided on this instance's counts, no round trip).
   */
  private record(visit: Visit, link: CachedLink, variant: number | null, clickId?: string): void {
    const { req, address } = visit;
    if (visit.source === 'link') return this.recorder.record(req, link, address, variant, visit.id!, 'link', clickId);
    this.recorder.record(req, link, address, variant, visit.id!, this.scans.counts(link.id, address) ? 'qr' : 'link', clickId);
  }

  /**
   * A code that does not exist is an orphan visit for analytics (docs/analytics.md); then the usual
   * problem. A disabled link answers exactly as a code that does not exist, so that a visitor cannot
   * tell it exists; it is still the tenant's link, so its visit is no orphan (docs/design.md,
   * "Security model").
   */
  private notFound(visit: Visit, error: unknown): void {
    const code = (error as DomainError)?.code;
    if (visit.req.method === 'GET' && code === ErrorCode.LINK_NOT_FOUND) this.recorder.recordOrphan(visit.req, visit.id!, visit.address, visit.source);
    this.refused(visit, code === ErrorCode.LINK_DISABLED ? unknownLink(visit.id!) : error);
  }

  /** A page in the visitor's language, with the look of the domain it reached. */
  private page(visit: Visit, make: (text: PageText, lang: PageContext['lang']) => Page): void {
    if (visit.res.headersSent) return;
    const context = this.pages.contextOf(visit.req, this.visitDomain(visit));
    const page = make(context.text, context.lang);
    this.metrics.status(page.status);
    sendPage(visit.res, page, context, visit.req.method === 'HEAD');
    this.metrics.duration.observe((performance.now() - visit.started) / 1000);
  }

  /**
   * Every refusal a visitor can meet (docs/design.md, "Pages"): a browser gets the domain's redirect
   * when its owner set one (an unknown code, an expired or exhausted link) or a page; any other client,
   * and any other error, the problem+json it always got. Only here is the request negotiated.
   */
  private refused(visit: Visit, error: unknown): void {
    if (visit.res.headersSent) return;
    const code = error instanceof DomainError ? error.code : undefined;
    const status = problemFor(error).status;
    const negotiable = (code !== undefined && NEGOTIATED_CODES.has(code)) || status >= 500;
    if (!negotiable || !this.pages.wantsPage(visit.req)) return this.problem(visit, error, negotiable);
    const settings = this.pages.settingsOf(this.visitDomain(visit));
    const retryAfter = retryAfterFor(error, status);
    switch (code) {
      case ErrorCode.LINK_NOT_FOUND:
      case ErrorCode.LINK_DISABLED:
        if (settings?.notFoundRedirect) return this.domainRedirect(visit, settings.notFoundRedirect, true);
        return this.page(visit, notFoundPage);
      case ErrorCode.LINK_EXPIRED:
      case ErrorCode.LINK_EXHAUSTED:
        if (settings?.expiredRedirect) return this.domainRedirect(visit, settings.expiredRedirect, true);
        return this.page(visit, code === ErrorCode.LINK_EXPIRED ? expiredPage : exhaustedPage);
      case ErrorCode.RATE_LIMITED:
        return this.page(visit, (t) => limitedPage(t, retryAfter));
      default:
        return this.page(visit, (t) => (status === 503 ? unavailablePage(t, retryAfter) : errorPage(t)));
    }
  }

  /**
   * Where the domain's owner sends visitors instead of a page: 302, `private, no-store` (a change of
   * the settings is seen at once), no click. `negotiated`: only browsers get it (Vary: Accept).
   */
  private domainRedirect(visit: Visit, location: string, negotiated: boolean): void {
    if (visit.res.headersSent) return;
    this.metrics.status(302);
    const headers: Record<string, string> = { location, 'cache-control': 'private, no-store', 'content-length': '0' };
    if (negotiated) headers.vary = 'Accept';
    visit.res.writeHead(302, headers);
    visit.res.end();
    this.metrics.duration.observe((performance.now() - visit.started) / 1000);
  }

  private refuse(visit: Visit, scope: 'ip' | 'global', retryAfterSeconds: number): true {
    this.metrics.rateLimited.inc({ scope });
    const message = scope === 'ip' ? 'too many redirects from this address' : 'the service is at its request limit';
    this.refused(visit, new DomainError(ErrorCode.RATE_LIMITED, message, { retryAfterSeconds }));
    return true;
  }

  /** The domain the visitor reached: the link's, or the Host's when no code was taken apart. */
  private visitDomain(visit: Visit): string {
    return visit.id?.domain ?? this.domainOf(visit.req);
  }

  /** problem+json; `negotiated`: a browser would have had a page, so caches must keep the two apart (Vary). */
  private problem(visit: Visit, error: unknown, negotiated = false): void {
    const { req, res } = visit;
    if (res.headersSent) return;
    const problem = problemFor(error, req.url);
    this.metrics.status(problem.status);
    const headers: Record<string, string> = { 'content-type': 'application/problem+json' };
    if (negotiated) headers.vary = 'Accept, Accept-Language';
    const retryAfter = retryAfterFor(error, problem.status);
    if (retryAfter) headers['retry-after'] = retryAfter;
    if (problem.status === 405) headers.allow = 'GET, HEAD';
    // A body too large is not read to its end: the connection goes with the answer.
    if (problem.status === 413) headers.connection = 'close';
    const body = JSON.stringify(problem);
    headers['content-length'] = String(Buffer.byteLength(body));
    res.writeHead(problem.status, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
    this.metrics.duration.observe((performance.now() - visit.started) / 1000);
  }

  /**
   * The link's host: a configured short domain or a tenant's, else the default domain (e.g. when
   * reached by IP). `GO.acme.test.:443` is `go.acme.test`: a variant of a tenant's host must not
   * fall through to the default domain, where another tenant may hold the same code. A port that
   * names none of our domains is the domain without it (`go.acme.test:8080`: the redirect listening
   * on its own port, no proxy in front); a domain configured with its port (the default
   * `localhost:8080`) matches first.
   */
  domainOf(req: IncomingMessage): string {
    return this.servedDomainOf(req) ?? this.config.links.defaultDomain;
  }

  /** As domainOf, but null for a tenant's domain that is not verified (it serves nothing). */
  servedDomainOf(req: IncomingMessage): string | null {
    const host = req.headers.host;
    if (host) {
      let h = this.hosts.get(host);
      if (h === undefined) {
        h = normalizeHost(host);
        if (host.length <= MAX_HOST_LENGTH) {
          if (this.hosts.size >= MAX_HOSTS) this.hosts.clear();
          this.hosts.set(host, h);
        }
      }
      if (this.domains.has(h) || this.tenants.isTenantDomain(h)) return h;
      const name = h.replace(/:\d{1,5}$/, '');
      if (name !== h && (this.domains.has(name) || this.tenants.isTenantDomain(name))) return name;
      if (this.tenants.isUnverifiedDomain(h) || this.tenants.isUnverifiedDomain(name)) return null;
    }
    return this.config.links.defaultDomain;
  }
}

const counterUnreachable = () =>
  new DomainError(ErrorCode.DEPENDENCY_UNAVAILABLE, 'the click counter of this link is unreachable; retry shortly', { retryAfterSeconds: 1 });
const exhausted = () => new DomainError(ErrorCode.LINK_EXHAUSTED, 'this link has reached its maximum number of clicks');
const notAllowed = () => new DomainError(ErrorCode.METHOD_NOT_ALLOWED, 'only a password-protected link takes a POST (its password form)');

/** The refusals a browser gets as a page (or as its domain's redirect); every other error stays problem+json for everyone. */
const NEGOTIATED_CODES: ReadonlySet<string> = new Set([
  ErrorCode.LINK_NOT_FOUND,
  ErrorCode.LINK_DISABLED,
  ErrorCode.LINK_EXPIRED,
  ErrorCode.LINK_EXHAUSTED,
  ErrorCode.RATE_LIMITED,
  ErrorCode.SHARD_UNAVAILABLE,
  ErrorCode.DEPENDENCY_UNAVAILABLE,
]);

/** An error problemFor turns into a 4xx with Fastify's stable codes (PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE, BAD_REQUEST). */
const httpError = (statusCode: number, message: string) => Object.assign(new Error(message), { statusCode });

/** The body of a form (the password's, a report's): urlencoded, at most `maxBytes`, read without the framework. */
export function readForm(req: IncomingMessage, maxBytes = MAX_FORM_BYTES): Promise<string> {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return Promise.reject(httpError(415, 'the form is sent as application/x-www-form-urlencoded'));
  if (Number(req.headers['content-length'] ?? 0) > maxBytes) return Promise.reject(httpError(413, `the form is larger than ${maxBytes} bytes`));
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
      if (size > maxBytes) return fail(httpError(413, `the form is larger than ${maxBytes} bytes`));
      chunks.push(chunk);
    };
    const onEnd = () => resolve(Buffer.concat(chunks).toString('utf8'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', fail);
  });
}

/** Rules that hold only conversion tracking: the plain path serves them (with a click id). */
function onlyClickId(rules: NonNullable<CachedLink['rules']>): boolean {
  if (rules.clickIdParam === undefined) return false;
  for (const key in rules) if (key !== 'clickIdParam') return false;
  return true;
}
