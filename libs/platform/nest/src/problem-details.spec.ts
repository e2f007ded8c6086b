import { BadRequestException, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import { DomainError, ErrorCode } from '@shortlink/core';
import { instanceOf, problemFor, retryAfterFor, STATUS_BY_CODE } from './problem-details';
import pino from 'pino';
import { Readable } from 'stream';
import { PinoNestLogger } from './logging';
import { ProblemDetailsFilter } from './problem-details.filter';
import { StreamedBody } from './streamed-body';

describe('problemFor', () => {
  it('maps every domain code to its status, with the stable fields and the details', () => {
    for (const code of Object.values(ErrorCode)) {
      const p = problemFor(new DomainError(code, `about ${code}`, { field: 'x' }), '/api/v1/links');
      expect(p).toMatchObject({ status: STATUS_BY_CODE[code], code, detail: `about ${code}`, field: 'x', instance: '/api/v1/links' });
      expect(p.type).toBe(`https://shortlink.dev/problems/${code.toLowerCase().replace(/_/g, '-')}`);
      expect(typeof p.title).toBe('string');
    }
  });

  it('never lets details override the stable fields, and drops the internal lookup source', () => {
    const p = problemFor(new DomainError(ErrorCode.LINK_NOT_FOUND, 'no link', { status: 200, code: 'OK', source: 'l1_negative', shortCode: 'abc' }));
    expect(p).toMatchObject({ status: 404, code: 'LINK_NOT_FOUND', shortCode: 'abc' });
    expect(p).not.toHaveProperty('source');
  });

  it('words framework rejections itself: a route-not-found never repeats the path', () => {
    const p = problemFor(new NotFoundException('Cannot GET /secret-path-echo'), '/secret-path-echo?x=1');
    expect(p).toMatchObject({ status: 404, code: 'ROUTE_NOT_FOUND', detail: 'no route matches this method and path', instance: '/secret-path-echo' });
    expect(problemFor(new PayloadTooLargeException()).code).toBe('PAYLOAD_TOO_LARGE');
    expect(problemFor(new BadRequestException('Unexpected token')).code).toBe('BAD_REQUEST');
  });

  it('maps Fastify errors by their statusCode and anything else to a generic 500', () => {
    expect(problemFor(Object.assign(new Error('Body is not valid JSON'), { statusCode: 400 }))).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
    expect(problemFor(Object.assign(new Error('unsupported'), { statusCode: 415 }))).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
    const internal = problemFor(new Error('password=hunter2 at db host 10.0.0.5'));
    expect(internal).toMatchObject({ status: 500, code: 'INTERNAL', detail: 'internal error' });
    expect(JSON.stringify(internal)).not.toContain('hunter2');
  });
});

describe('instanceOf', () => {
  it('is the path without its query string, left out when long', () => {
    expect(instanceOf('/api/v1/links/abc?api_key=sl_secret')).toBe('/api/v1/links/abc');
    expect(instanceOf('/' + 'a'.repeat(256))).toBeUndefined();
    expect(instanceOf(undefined)).toBeUndefined();
  });
});

describe('retryAfterFor', () => {
  it('uses the error hint on 429 and 503, one second otherwise, and nothing on other statuses', () => {
    expect(retryAfterFor(new DomainError(ErrorCode.RATE_LIMITED, 'slow down', { retryAfterSeconds: 42 }), 429)).toBe('42');
    expect(retryAfterFor(new Error('x'), 503)).toBe('1');
    expect(retryAfterFor(new DomainError(ErrorCode.VALIDATION_FAILED, 'bad'), 400)).toBeUndefined();
  });
});

describe('ProblemDetailsFilter', () => {
  it('sends problem+json with the status and Retry-After', () => {
    const sent: { status?: number; headers: Record<string, string>; body?: unknown } = { headers: {} };
    const reply = {
      status(code: number) {
        sent.status = code;
        return reply;
      },
      header(name: string, value: string) {
        sent.headers[name.toLowerCase()] = value;
        return reply;
      },
      send(body: unknown) {
        sent.body = body;
        return reply;
      },
    };
    const host = { getType: () => 'http', switchToHttp: () => ({ getResponse: () => reply, getRequest: () => ({ url: '/api/v1/links?api_key=k' }) }) };
    const filter = new ProblemDetailsFilter(new PinoNestLogger(pino({ level: 'silent' })));
    filter.catch(new DomainError(ErrorCode.RATE_LIMITED, 'too many', { retryAfterSeconds: 7 }), host as never);
    expect(sent).toEqual({
      status: 429,
      headers: { 'retry-after': '7', 'content-type': 'application/problem+json' },
      body: expect.objectContaining({ code: 'RATE_LIMITED', status: 429, instance: '/api/v1/links' }),
    });
  });

  it('logs a 500 in its own app, with the error and the path, never the query', () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = new PinoNestLogger(pino({ base: { app: 'generation' } }, { write: (line: string) => void lines.push(JSON.parse(line)) }));
    const reply = { code: () => reply, status: () => reply, header: () => reply, send: () => reply };
    const host = { getType: () => 'http', switchToHttp: () => ({ getResponse: () => reply, getRequest: () => ({ url: '/api/v1/links?api_key=k' }) }) };
    new ProblemDetailsFilter(logger).catch(new Error('shard s2 exploded'), host as never);
    const err = expect.objectContaining({ message: 'shard s2 exploded' });
    expect(lines).toEqual([expect.objectContaining({ app: 'generation', context: 'ProblemDetails', path: '/api/v1/links', err })]);
    expect(JSON.stringify(lines)).not.toContain('api_key');
  });

  it('gives a microservice handler (the click bus transport) its error back as it was, logging and sending nothing', () => {
    const lines: string[] = [];
    const logger = new PinoNestLogger(pino({}, { write: (line: string) => void lines.push(line) }));
    const host = { getType: () => 'rpc', switchToHttp: () => ({ getResponse: () => ({}), getRequest: () => ({}) }) };
    const error = new Error('ClickHouse at http://127.0.0.1:8123 is unreachable (ECONNRESET)');
    expect(() => new ProblemDetailsFilter(logger).catch(error, host as never)).toThrow(error);
    expect(lines).toEqual([]);
  });
});

describe('ProblemDetailsFilter on a request whose body is not read', () => {
  const answer = (complete: boolean | undefined, body?: unknown) => {
    const headers: Record<string, string> = {};
    const reply = {
      status: () => reply,
      header(name: string, value: string) {
        headers[name.toLowerCase()] = value;
        return reply;
      },
      send: () => reply,
    };
    const request = { url: '/api/v1/links/batch', raw: complete === undefined ? {} : { complete }, body };
    const host = { getType: () => 'http', switchToHttp: () => ({ getResponse: () => reply, getRequest: () => request }) };
    new ProblemDetailsFilter(new PinoNestLogger(pino({ level: 'silent' }))).catch(
      new DomainError(ErrorCode.BATCH_CONCURRENCY_LIMIT, 'busy', { retryAfterSeconds: 5 }),
      host as never,
    );
    return headers;
  };

  it('closes the connection with the answer, so the unread rest of the body holds no socket; a complete request keeps it', () => {
    expect(answer(false)).toMatchObject({ connection: 'close', 'retry-after': '5' });
    expect(answer(true)).not.toHaveProperty('connection');
    expect(answer(undefined)).not.toHaveProperty('connection'); // no socket under it (an injected request)
  });

  it('closes the connection of a streamed route refused before its body was read, even once the body has all arrived', () => {
    expect(answer(true, new StreamedBody('application/x-ndjson', Readable.from([]), 1024))).toMatchObject({ connection: 'close' });
    expect(answer(true, { url: 'https://example.com/' })).not.toHaveProperty('connection');
  });
});
