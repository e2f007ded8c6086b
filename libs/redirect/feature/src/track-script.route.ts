import { createHash } from 'crypto';
import type { IncomingMessage, ServerResponse } from 'http';
import { FrontRoute } from '@shortlink/nest-platform';
import { TRACK_SCRIPT } from '@shortlink/track';

/** `/sl-track.js`, with a query string or none (a version pin, `?v=1`): a path with a dot is never a code. */
const TRACK_SCRIPT_PATH = /^\/sl-track\.js(?:\?.*)?$/;

/**
 * The first-party cookie script of conversion tracking (docs/analytics.md, "Conversions"; the
 * package @shortlink/track) on every short domain: a tenant's landing page loads
 * `<script src="https://<short domain>/sl-track.js" defer>`, which keeps the click id in a cookie
 * of the tenant's own site. The same bytes on every instance, cached a day, ETag for revalidation,
 * readable cross-origin (`crossorigin` and Subresource Integrity work).
 */
export class TrackScriptRoute {
  private readonly body = Buffer.from(TRACK_SCRIPT);
  private readonly etag = `"${createHash('sha256').update(this.body).digest('base64url').slice(0, 22)}"`;

  @FrontRoute({ methods: ['GET', 'HEAD'], path: '/sl-track.js', pattern: TRACK_SCRIPT_PATH })
  serve(req: IncomingMessage, res: ServerResponse): boolean {
    const headers = {
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=86400',
      etag: this.etag,
      'access-control-allow-origin': '*',
      'cross-origin-resource-policy': 'cross-origin',
      'x-content-type-options': 'nosniff',
    };
    if (req.headers['if-none-match'] === this.etag) {
      res.writeHead(304, headers);
      res.end();
      return true;
    }
    res.writeHead(200, { ...headers, 'content-length': String(this.body.length) });
    res.end(req.method === 'HEAD' ? undefined : this.body);
    return true;
  }
}
