import { Controller, Get, NotFoundException, Param, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { readFileSync } from 'fs';
import { join } from 'path';

const UPLOT = join(require.resolve('uplot/package.json'), '..', 'dist');
const OWN = join(__dirname, 'dashboard');

/** The files the page loads, all served from here: the chart library from node_modules, no CDN. */
const ASSETS: Readonly<Record<string, { file: string; type: string }>> = {
  'dashboard.js': { file: join(OWN, 'dashboard.js'), type: 'application/javascript; charset=utf-8' },
  'dashboard.css': { file: join(OWN, 'dashboard.css'), type: 'text/css; charset=utf-8' },
  'uPlot.iife.min.js': { file: join(UPLOT, 'uPlot.iife.min.js'), type: 'application/javascript; charset=utf-8' },
  'uPlot.min.css': { file: join(UPLOT, 'uPlot.min.css'), type: 'text/css; charset=utf-8' },
};
/**
 * Scripts and styles only from this origin, data only from the API here, no framing. The API key
 * lives in sessionStorage (gone with the tab) and goes out as the x-api-key header, never in a URL.
 */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** The analysts' dashboard (docs/analytics.md, "Dashboard"): a static page over the query API. */
@Controller('dashboard')
export class DashboardController {
  private readonly page = readFileSync(join(OWN, 'index.html'));

  @Get()
  index(@Res() reply: FastifyReply): void {
    reply
      .header('content-security-policy', CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .send(this.page);
  }

  @Get('assets/:file')
  asset(@Param('file') file: string, @Res() reply: FastifyReply): void {
    const asset = Object.prototype.hasOwnProperty.call(ASSETS, file) ? ASSETS[file] : undefined;
    if (!asset) throw new NotFoundException();
    reply.header('cache-control', 'public, max-age=3600').header('x-content-type-options', 'nosniff').type(asset.type).send(readFileSync(asset.file));
  }
}
