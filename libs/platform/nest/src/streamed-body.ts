import { Injectable } from '@nestjs/common';
import type { IncomingMessage } from 'http';
import type { Readable } from 'stream';
import type { FastifyInstance } from 'fastify';
import { DomainError, ErrorCode } from '@shortlink/core';

/**
 * A route that reads its request body as it arrives instead of receiving it parsed (batch
 * creation: docs/design.md, "Batch creation"). Every other route keeps the 1 MiB JSON body.
 */
export interface StreamedRoute {
  readonly method: string;
  /** The path as requested (a static route: no parameters), without the query string. */
  readonly path: string;
  /** Media types the route reads as a stream (others are refused with 415). */
  readonly mediaTypes: readonly string[];
  /** Bytes the body may have at most. */
  readonly maxBytes: number;
  /** The whole request must have arrived within this (instead of HTTP_REQUEST_TIMEOUT_MS). */
  readonly timeoutMs: number;
}

/** The body a streamed route gets: its media type and its bytes as they arrive. */
export class StreamedBody {
  constructor(
    readonly mediaType: string,
    private readonly stream: Readable,
    readonly maxBytes: number,
  ) {}

  /** The body's bytes; fails with PAYLOAD_TOO_LARGE once more than `maxBytes` arrived. */
  async *chunks(): AsyncGenerator<Buffer> {
    let received = 0;
    for await (const chunk of this.stream as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (received > this.maxBytes) throw tooLarge(this.maxBytes);
      yield chunk;
    }
  }
}

const tooLarge = (max: number) => new DomainError(ErrorCode.PAYLOAD_TOO_LARGE, `the body is larger than ${max} bytes`, { maxBytes: max });

/** The streamed routes of an app: features register theirs while the app is built; the server reads them per request. */
@Injectable()
export class StreamedRoutes {
  private readonly routes = new Map<string, StreamedRoute>();

  register(route: StreamedRoute): void {
    this.routes.set(`${route.method} ${route.path}`, route);
  }

  match(method: string | undefined, url: string | undefined): StreamedRoute | undefined {
    if (!method || !url || this.routes.size === 0) return undefined;
    const q = url.indexOf('?');
    return this.routes.get(`${method} ${q < 0 ? url : url.slice(0, q)}`);
  }

  /** The deadline of a request: its route's, or null for the server's default. */
  timeoutOf(req: IncomingMessage): number | null {
    return this.match(req.method, req.url)?.timeoutMs ?? null;
  }
}

/** The media type of a Content-Type header: lower case, parameters dropped. */
export const mediaTypeOf = (header: string | undefined): string => (header ?? '').split(';', 1)[0].trim().toLowerCase();

/** Internal: what a streamed route's Content-Type is rewritten to, so that the JSON parser leaves its body alone. */
const STREAMED = 'application/x-shortlink-streamed';
const ORIGINAL_TYPE = Symbol('streamedBodyType');

/**
 * Fastify picks a body parser by media type only, and its JSON parser reads the whole body (1 MiB).
 * For a streamed route the Content-Type is swapped, before parsing, for an internal type whose
 * parser hands the route the raw stream; a body declared larger than the route allows is a 413
 * before a byte is read.
 */
export function acceptStreamedBodies(instance: FastifyInstance, routes: StreamedRoutes): void {
  instance.addHook('onRequest', (request, _reply, done) => {
    const route = routes.match(request.method, request.url);
    const type = mediaTypeOf(request.headers['content-type']);
    if (route && route.mediaTypes.includes(type)) {
      (request.raw as IncomingMessage & { [ORIGINAL_TYPE]?: string })[ORIGINAL_TYPE] = type;
      request.raw.headers['content-type'] = STREAMED;
    }
    done();
  });
  instance.addContentTypeParser(STREAMED, (request, payload, done) => {
    const route = routes.match(request.method, request.url);
    const type = (request.raw as IncomingMessage & { [ORIGINAL_TYPE]?: string })[ORIGINAL_TYPE];
    if (!route || !type)
      return done(Object.assign(new Error('unsupported media type'), { statusCode: 415, code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' }), undefined);
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > route.maxBytes)
      return done(
        Object.assign(new Error(`the body is larger than ${route.maxBytes} bytes`), { statusCode: 413, code: 'FST_ERR_CTP_BODY_TOO_LARGE' }),
        undefined,
      );
    done(null, new StreamedBody(type, payload, route.maxBytes));
  });
}
