import { Controller, Get, Inject, NotFoundException, Param, Req, Res } from '@nestjs/common';
import type { AppConfig } from '@shortlink/config';
import { APP_CONFIG } from '@shortlink/nest-platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { existsSync, readFileSync } from 'fs';
import { extname, join, resolve } from 'path';

/**
 * Where `npm run console:build` (Vite, apps/console) writes the console: dist/console at the
 * repository's root, found from this file run from its source (libs/console/feature/src) or
 * compiled (dist/libs/console/feature/src).
 */
export const CONSOLE_DIRS = [resolve(__dirname, '../../../../dist/console'), resolve(__dirname, '../../../../console')];

/**
 * Scripts, styles and data only from this origin (the console calls /api/v1 here with the session
 * cookie), no inline script or style, no framing, forms posted by script only.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; manifest-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
};
/** Vite's hashed asset names: nothing else is served from assets/ (no path, no dot-file). */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/**
 * The console (apps/console; README, "The console"): a single-page app served as static files.
 * index.html is revalidated on every load (no-cache); the assets it names carry a content hash in
 * their name and are cached for a year (immutable).
 */
@Controller('console')
export class ConsoleController {
  private readonly dir = CONSOLE_DIRS.find((d) => existsSync(join(d, 'index.html'))) ?? CONSOLE_DIRS[0];

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Get()
  index(@Res() reply: FastifyReply): void {
    this.page(reply);
  }

  /** The page an invitation mail links to (SHORTLINK_CONSOLE_URL/accept-invitation#token=…): the same app. */
  @Get('accept-invitation')
  acceptInvitation(@Res() reply: FastifyReply): void {
    this.page(reply);
  }

  /**
   * What the console needs to know of the installation: where the analytics dashboard is (it takes
   * the same session: the cookie of a host goes to each of its ports), and the service's domains
   * every tenant's links may be on (the default one first), which the domains API lists for
   * operators only.
   */
  @Get('settings.json')
  settings(@Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    const analyticsUrl = this.config.people.analyticsUrl ?? `${request.protocol}://${request.hostname.replace(/:\d+$/, '')}:${this.config.ports.analytics}`;
    reply
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .send({
        analyticsUrl,
        dashboardUrl: `${analyticsUrl}/dashboard`,
        defaultDomain: this.config.links.defaultDomain,
        sharedDomains: this.config.links.domains.filter((d) => d !== this.config.links.defaultDomain),
      });
  }

  @Get('assets/:file')
  asset(@Param('file') file: string, @Res() reply: FastifyReply): void {
    const type = TYPES[extname(file)];
    const path = join(this.dir, 'assets', file);
    if (!ASSET_NAME.test(file) || !type || !existsSync(path)) throw new NotFoundException();
    reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .header('cross-origin-resource-policy', 'same-origin')
      .type(type)
      .send(readFileSync(path));
  }

  /**
   * Any other path under /console/ (`/console/`, where SSO sends people back; a bookmarked page):
   * the same app, whose screens are in the URL's fragment. A name with a dot is a file that is not there.
   */
  @Get('*')
  other(@Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    if (/\.[A-Za-z0-9]+$/.test(new URL(request.url, 'http://x').pathname)) throw new NotFoundException();
    this.page(reply);
  }

  private page(reply: FastifyReply): void {
    const file = join(this.dir, 'index.html');
    reply
      .header('content-security-policy', CONSOLE_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-cache');
    if (!existsSync(file)) {
      reply.code(503).type('text/plain; charset=utf-8').send('The console is not built: run `npm run console:build` (npm start does it first).\n');
      return;
    }
    reply.type('text/html; charset=utf-8').send(readFileSync(file));
  }
}
