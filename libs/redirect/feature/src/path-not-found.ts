import { Controller, Get, Inject, NotFoundException, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RedirectHttpHandler } from './redirect-http.handler';
import { VisitorPages } from './visitor-pages';

/**
 * Any other path of a short domain, one that is no short URL (`/a.php`, `/favicon.png`): the
 * domain's path-not-found redirect (Shlink's "regular 404"; docs/design.md, "Domain settings") for a
 * browser, as the not-found redirect of an unknown code is; the framework's 404 otherwise, as before.
 * The lowest route of the app: every route of its own, and the hot `/{code}` before the framework, come first.
 */
@Controller()
export class PathNotFound {
  constructor(
    @Inject(RedirectHttpHandler) private readonly handler: RedirectHttpHandler,
    @Inject(VisitorPages) private readonly pages: VisitorPages,
  ) {}

  @Get('*')
  elsewhere(@Req() req: FastifyRequest, @Res() reply: FastifyReply): void {
    const target = pathNotFoundTarget(req, this.handler, this.pages);
    if (target === null) throw new NotFoundException();
    reply.status(302).header('location', target).header('cache-control', 'private, no-store').header('vary', 'Accept').send();
  }
}

/** Where a browser asking for a path that is no short URL goes: the domain's setting, or null (404). */
export function pathNotFoundTarget(
  req: FastifyRequest,
  handler: Pick<RedirectHttpHandler, 'servedDomainOf'>,
  pages: Pick<VisitorPages, 'wantsPage' | 'settingsOf'>,
): string | null {
  if (!pages.wantsPage(req.raw)) return null;
  const domain = handler.servedDomainOf(req.raw);
  return domain === null ? null : (pages.settingsOf(domain)?.pathNotFoundRedirect ?? null);
}
