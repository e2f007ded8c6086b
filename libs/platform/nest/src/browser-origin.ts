import type { FastifyRequest } from 'fastify';
import type { AppConfig } from '@shortlink/config';
import { DomainError, ErrorCode } from '@shortlink/core';

/**
 * Refuses what a browser sends from a page of another site to a route whose answer acts on the
 * browser's cookies: a sign-in (which sets one) and every write made with the session cookie
 * (docs/design.md, "People and sessions", CSRF). A browser names the page that sent a request in
 * `Origin` (every POST, PUT, PATCH, DELETE) and `Sec-Fetch-Site`; a program sends neither, and is
 * not refused. Allowed: this host itself (the console and the dashboard are served by the app they
 * call), the console's origin (SHORTLINK_CONSOLE_URL) and the origins CORS_ORIGINS lists.
 */
export class BrowserOrigins {
  private readonly allowed: ReadonlySet<string>;

  constructor(allowedOrigins: readonly string[]) {
    this.allowed = new Set(allowedOrigins.filter((o) => o !== '*').map((o) => o.toLowerCase()));
  }

  static of(config: AppConfig): BrowserOrigins {
    return new BrowserOrigins([config.people.session.consoleOrigin, ...config.http.corsOrigins]);
  }

  /** Throws 403 CROSS_SITE_REQUEST when a browser sent the request from a page this app does not serve or trust. */
  check(request: FastifyRequest): void {
    const origin = header(request, 'origin');
    const site = header(request, 'sec-fetch-site');
    if (origin !== undefined) {
      if (this.allowed.has(origin.toLowerCase()) || sameHost(origin, header(request, 'host'))) return;
      throw refused(origin === 'null' ? 'a page without an origin (a sandboxed frame, a data: URL)' : `a page of ${origin.slice(0, 200)}`);
    }
    // Fetch metadata without Origin: a browser that says the page was another site's.
    if (site === 'cross-site' || site === 'same-site') throw refused(`a ${site} page`);
  }
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** Whether an Origin names the host (and port) the request was sent to: the app's own pages. */
function sameHost(origin: string, host: string | undefined): boolean {
  if (!host) return false;
  try {
    return new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

const refused = (who: string) =>
  new DomainError(ErrorCode.CROSS_SITE_REQUEST, `refused: sent by ${who}; sign in and write from the console, or call the API without a browser`);
