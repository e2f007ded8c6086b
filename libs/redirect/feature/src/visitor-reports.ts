import type { IncomingMessage, ServerResponse } from 'http';
import { DomainError, ErrorCode } from '@shortlink/core';
import { isPlausibleCode, LinkResolver, unknownLink } from '@shortlink/links-domain';
import { ClientAddressResolver, FrontRoute, problemFor, retryAfterFor } from '@shortlink/nest-platform';
import { MAX_REPORT_DETAILS, ReportIntake } from '@shortlink/safety-domain';
import { PageText } from './page-text';
import { limitedPage, notFoundPage, Page, PageContext, reportInvalidPage, reportSentPage, sendPage, unavailablePage } from './pages';
import { RedirectMetrics } from './redirect.metrics';
import { readForm } from './redirect-http.handler';
import { VisitorPages } from './visitor-pages';

/** `POST /r/report`, with a query string or none. `r` is a reserved first segment: no code starts with it. */
const REPORT_PATH = /^\/r\/report(?:\?.*)?$/;
/** A report's form: the code, a reason and at most 1000 characters of details, percent-encoded (up to 9 bytes a character). */
const MAX_REPORT_FORM_BYTES = 16 * 1024;

/** What the report route works with. */
export interface VisitorReportParts {
  readonly intake: ReportIntake;
  readonly links: LinkResolver;
  readonly addresses: ClientAddressResolver;
  readonly pages: VisitorPages;
  readonly metrics: RedirectMetrics;
  /** The domain a request reached (a short domain or a verified tenant's), null for an unverified one. */
  readonly domainOf: (req: IncomingMessage) => string | null;
}

/**
 * "Report this link" on every short domain (docs/design.md, "Trust and safety"): the preview and
 * warning pages' form posts here, to the origin the visitor is on (their CSP allows no other). The
 * link is found through the read path (usually L1 or Redis, no shard query) and the report goes
 * through the safety context's intake, as the generation app's `POST /r/report` does: the same
 * reasons and limits, REPORTS_PER_VISITOR_PER_HOUR per client address and instance. A browser gets
 * a confirmation page (or the form again with what to fix, or the 404 or 429 page); any other
 * client 202 `{status}` or problem+json.
 */
export class VisitorReportRoute {
  constructor(private readonly parts: VisitorReportParts) {}

  @FrontRoute({ methods: ['POST'], path: '/r/report', pattern: REPORT_PATH })
  report(req: IncomingMessage, res: ServerResponse): boolean {
    const domain = this.parts.domainOf(req);
    const page = this.parts.pages.wantsPage(req);
    const context = this.parts.pages.contextOf(req, domain ?? '');
    this.submit(req, domain).then(
      ({ code, outcome }) => {
        if (page) return this.page(res, context, (t) => reportSentPage(t, code));
        this.json(res, 202, { status: outcome });
      },
      (error: unknown) => this.refused(req, res, context, page, error),
    );
    return true;
  }

  private async submit(req: IncomingMessage, domain: string | null): Promise<{ code: string; outcome: 'accepted' | 'duplicate' }> {
    const form = new URLSearchParams(await readForm(req, MAX_REPORT_FORM_BYTES));
    const code = form.get('code') ?? '';
    const reason = form.get('reason') ?? undefined;
    const details = form.get('details') ?? undefined;
    if (domain === null || !isPlausibleCode(code)) throw unknownLink({ domain: domain ?? '', code });
    const { link } = await this.parts.links.resolve({ domain, code });
    try {
      const outcome = await this.parts.intake.submit(
        { linkId: link.id, domain, code, tenantId: link.tenantId },
        { reason, details },
        this.parts.addresses.of(req),
      );
      return { code, outcome };
    } catch (error) {
      if (error instanceof DomainError && error.code === ErrorCode.VALIDATION_FAILED) throw new InvalidReport(code, reason, details, error);
      throw error;
    }
  }

  private refused(req: IncomingMessage, res: ServerResponse, context: PageContext, page: boolean, error: unknown): void {
    const code = error instanceof DomainError ? error.code : undefined;
    const status = problemFor(error).status;
    if (page) {
      const retryAfter = retryAfterFor(error, status);
      if (error instanceof InvalidReport)
        return this.page(res, context, (t) => reportInvalidPage(t, error.code, { reason: error.reason, details: error.details?.slice(0, MAX_REPORT_DETAILS) }));
      if (code === ErrorCode.LINK_NOT_FOUND || code === ErrorCode.LINK_DISABLED || code === ErrorCode.LINK_EXPIRED)
        return this.page(res, context, notFoundPage);
      if (code === ErrorCode.RATE_LIMITED) return this.page(res, context, (t) => limitedPage(t, retryAfter));
      if (status >= 500) return this.page(res, context, (t) => unavailablePage(t, retryAfter));
    }
    // A disabled or expired link is reported as unknown: nothing of it is told (docs/design.md, "Security model").
    const hidden = code === ErrorCode.LINK_DISABLED || code === ErrorCode.LINK_EXPIRED;
    const cause = error instanceof InvalidReport ? error.cause : hidden ? new DomainError(ErrorCode.LINK_NOT_FOUND, 'no such link') : error;
    const problem = problemFor(cause, req.url);
    const headers: Record<string, string> = {};
    const retryAfter = retryAfterFor(cause, problem.status);
    if (retryAfter) headers['retry-after'] = retryAfter;
    this.json(res, problem.status, problem, 'application/problem+json', headers);
  }

  private page(res: ServerResponse, context: PageContext, make: (text: PageText) => Page): void {
    if (res.headersSent) return;
    const page = make(context.text);
    this.parts.metrics.status(page.status);
    sendPage(res, page, context, false);
  }

  private json(res: ServerResponse, status: number, body: unknown, type = 'application/json', headers: Record<string, string> = {}): void {
    if (res.headersSent) return;
    this.parts.metrics.status(status);
    const text = JSON.stringify(body);
    res.writeHead(status, { ...headers, 'content-type': type, 'content-length': String(Buffer.byteLength(text)), 'cache-control': 'no-store' });
    res.end(text);
  }
}

/** A report the intake refused as invalid, with what the visitor sent (the form comes back filled in). */
class InvalidReport extends Error {
  constructor(
    readonly code: string,
    readonly reason: string | undefined,
    readonly details: string | undefined,
    override readonly cause: DomainError,
  ) {
    super(cause.message);
  }
}
