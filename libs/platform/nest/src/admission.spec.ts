import { EventEmitter } from 'events';
import type { IncomingMessage, ServerResponse } from 'http';
import { EventLoopLag, RequestDeadline } from '@shortlink/core';
import { AdmissionControl, workClassOf } from './admission';

const settings = {
  enabled: true,
  initial: 10,
  min: { redirect: 10, api: 10 },
  max: 10,
  latencyTargetMs: { redirect: 250, api: 1000 },
  deadlineMs: { redirect: 1500, api: 4000 },
  queueShedMs: 2000,
};

/** An event loop whose lag the test sets. */
const lagOf = (ms: { lag: number }) => Object.assign(new EventLoopLag(), { lagMs: () => ms.lag });

/** A response that records what was written (no socket). */
class FakeResponse extends EventEmitter {
  statusCode = 200;
  headersSent = false;
  headers: Record<string, unknown> = {};
  body = '';
  writeHead(status: number, headers: Record<string, unknown> = {}) {
    this.statusCode = status;
    this.headers = headers;
    this.headersSent = true;
    return this;
  }
  end(body = '') {
    if (!this.headersSent) this.writeHead(this.statusCode);
    this.body += body;
    return this;
  }
}
const request = (method: string, url: string, headers: Record<string, string> = {}) => ({ method, url, headers }) as IncomingMessage;

describe('workClassOf', () => {
  it('classes visits, writes, reads and analytics reads; never /health', () => {
    expect(workClassOf('redirect', 'GET', '/abc1234')).toBe('redirect');
    expect(workClassOf('redirect', 'POST', '/abc1234')).toBe('redirect');
    expect(workClassOf('generation', 'POST', '/api/v1/links')).toBe('write');
    expect(workClassOf('generation', 'GET', '/api/v1/links/abc')).toBe('read');
    expect(workClassOf('generation', 'GET', '/api/v1/links/abc/visits?page=2')).toBe('analytics');
    expect(workClassOf('generation', 'GET', '/rest/v3/short-urls/abc/visits')).toBe('analytics');
    expect(workClassOf('analytics', 'GET', '/api/v1/links/abc/stats')).toBe('analytics');
    expect(workClassOf('analytics', 'GET', '/api/v1/stats/top-links')).toBe('analytics');
    for (const app of ['redirect', 'generation', 'analytics'] as const) expect(workClassOf(app, 'GET', '/health')).toBeNull();
    for (const app of ['redirect', 'generation', 'analytics'] as const) expect(workClassOf(app, 'OPTIONS', '/rest/v3/short-urls')).toBeNull();
  });
});

describe('AdmissionControl', () => {
  beforeEach(() => jest.useFakeTimers({ now: 5_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('sheds a class beyond its share with 503 OVERLOADED and Retry-After, before the handler runs', () => {
    const a = new AdmissionControl('generation', settings);
    const held: FakeResponse[] = [];
    for (let i = 0; i < 7; i++) {
      const res = new FakeResponse();
      a.admit(request('GET', '/api/v1/links/x'), res as unknown as ServerResponse, false, () => undefined);
      held.push(res);
    }
    const next = jest.fn();
    const shed = new FakeResponse();
    a.admit(request('GET', '/api/v1/links/x'), shed as unknown as ServerResponse, false, next);
    expect(next).not.toHaveBeenCalled();
    expect(shed.statusCode).toBe(503);
    expect(shed.headers).toMatchObject({ 'retry-after': '1', 'content-type': 'application/problem+json' });
    expect(JSON.parse(shed.body)).toMatchObject({ code: 'OVERLOADED', status: 503, instance: '/api/v1/links/x' });
    // A write still has room (90 % of 10); with it in flight, reads are past their 7 until an answer frees a place.
    const write = jest.fn();
    a.admit(request('POST', '/api/v1/links'), new FakeResponse() as unknown as ServerResponse, false, write);
    expect(write).toHaveBeenCalled();
    const early = jest.fn();
    a.admit(request('GET', '/api/v1/links/x'), new FakeResponse() as unknown as ServerResponse, false, early);
    expect(early).not.toHaveBeenCalled();
    held[0].end('{}');
    held[1].end('{}');
    const read = jest.fn();
    a.admit(request('GET', '/api/v1/links/x'), new FakeResponse() as unknown as ServerResponse, false, read);
    expect(read).toHaveBeenCalled();
  });

  it("gives a shed answer to a compatible API's cross-origin call the CORS headers a browser needs to read it, and no other", () => {
    const a = new AdmissionControl('generation', settings, undefined, lagOf({ lag: 5000 }));
    const fromPage = new FakeResponse();
    a.admit(request('GET', '/rest/v3/short-urls', { origin: 'http://localhost:3000' }), fromPage as unknown as ServerResponse, false, jest.fn());
    expect(fromPage.statusCode).toBe(503);
    expect(fromPage.headers).toMatchObject({ 'access-control-allow-origin': '*', 'retry-after': '1' });
    expect(String(fromPage.headers['access-control-expose-headers'])).toContain('retry-after');
    for (const [url, headers] of [
      ['/api/v1/links/x', { origin: 'http://localhost:3000' }],
      ['/rest/v3/short-urls', {}],
    ] as const) {
      const res = new FakeResponse();
      a.admit(request('GET', url, headers), res as unknown as ServerResponse, false, jest.fn());
      expect(res.statusCode).toBe(503);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it("answers an API request 503 DEADLINE_EXCEEDED at its deadline, passes the rest down, and silences the late handler's answer", async () => {
    const a = new AdmissionControl('generation', settings);
    const res = new FakeResponse();
    let left = 0;
    a.admit(request('GET', '/api/v1/links/x'), res as unknown as ServerResponse, false, () => {
      jest.advanceTimersByTime(1000);
      left = RequestDeadline.remainingMs();
    });
    expect(left).toBe(3000);
    jest.advanceTimersByTime(3000);
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.body).code).toBe('DEADLINE_EXCEEDED');
    (res as unknown as ServerResponse).writeHead(200);
    (res as unknown as ServerResponse).end('late');
    expect(res.statusCode).toBe(503);
    expect(res.body).not.toContain('late');
  });

  it("counts a request's deadline from the end of its body, which the client may send slowly, and answers nothing before it", () => {
    const a = new AdmissionControl('redirect', settings);
    const res = new FakeResponse();
    const post = Object.assign(new EventEmitter(), request('POST', '/abc', { 'content-length': '24' }), { complete: false }) as unknown as IncomingMessage;
    let left = 0;
    a.admit(post, res as unknown as ServerResponse, false, () => undefined);
    jest.advanceTimersByTime(5000); // the body trickles in, far past the visit's 1.5 s
    expect(res.headersSent).toBe(false);
    post.emit('end');
    jest.advanceTimersByTime(1499);
    expect(res.headersSent).toBe(false);
    jest.advanceTimersByTime(1);
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.body).code).toBe('DEADLINE_EXCEEDED');
    // What a handler's calls get: what is left from the body's end.
    const late = new FakeResponse();
    const second = Object.assign(new EventEmitter(), request('POST', '/abc', { 'transfer-encoding': 'chunked' }), {
      complete: false,
    }) as unknown as IncomingMessage;
    a.admit(second, late as unknown as ServerResponse, false, () => {
      jest.advanceTimersByTime(3000);
      second.emit('end');
      jest.advanceTimersByTime(500);
      left = RequestDeadline.remainingMs();
    });
    expect(left).toBe(1000);
    expect(late.headersSent).toBe(false);
  });

  it('answers a visit 503 DEADLINE_EXCEEDED with Retry-After at its deadline (the handler then sends nothing), and sheds nothing when off or for a streamed route', () => {
    const a = new AdmissionControl('redirect', settings);
    const res = new FakeResponse();
    a.admit(request('GET', '/abc'), res as unknown as ServerResponse, false, () => undefined);
    jest.advanceTimersByTime(1499);
    expect(res.headersSent).toBe(false);
    jest.advanceTimersByTime(1);
    expect(res.statusCode).toBe(503);
    expect(res.headers).toMatchObject({ 'retry-after': '1', 'content-type': 'application/problem+json' });
    expect(JSON.parse(res.body).code).toBe('DEADLINE_EXCEEDED');
    (res as unknown as ServerResponse).writeHead(302, { location: 'https://late.example' });
    expect(res.statusCode).toBe(503);
    const off = new AdmissionControl('generation', { ...settings, enabled: false });
    const streamed = new AdmissionControl('generation', settings);
    const next = jest.fn();
    for (let i = 0; i < 50; i++) {
      off.admit(request('GET', '/api/v1/links/x'), new FakeResponse() as unknown as ServerResponse, false, next);
      streamed.admit(request('POST', '/api/v1/links/batch'), new FakeResponse() as unknown as ServerResponse, true, next);
    }
    expect(next).toHaveBeenCalledTimes(100);
  });

  it("counts the deadline from the request's arrival: the time it waited in a late event loop is spent already", () => {
    const loop = { lag: 600 };
    const a = new AdmissionControl('redirect', settings, undefined, lagOf(loop));
    const res = new FakeResponse();
    let left = 0;
    a.admit(request('GET', '/abc'), res as unknown as ServerResponse, false, () => {
      left = RequestDeadline.remainingMs();
    });
    expect(left).toBe(900);
    jest.advanceTimersByTime(899);
    expect(res.headersSent).toBe(false);
    jest.advanceTimersByTime(1);
    expect(JSON.parse(res.body).code).toBe('DEADLINE_EXCEEDED');
  });

  it('sheds at once, before the handler, what arrives while the loop is later than its class may wait: analytics reads first, API writes last', () => {
    const loop = { lag: 0 };
    const api = new AdmissionControl('generation', settings, undefined, lagOf(loop));
    const redirect = new AdmissionControl('redirect', settings, undefined, lagOf(loop));
    const served = (a: AdmissionControl, method: string, url: string) => {
      const next = jest.fn();
      const res = new FakeResponse();
      a.admit(request(method, url), res as unknown as ServerResponse, false, next);
      if (!next.mock.calls.length) {
        expect(res.statusCode).toBe(503);
        expect(res.headers).toMatchObject({ 'retry-after': '1' });
        expect(JSON.parse(res.body).code).toBe('OVERLOADED');
      }
      res.end();
      return next.mock.calls.length === 1;
    };
    const classes = (lag: number) => {
      loop.lag = lag;
      return [
        served(redirect, 'GET', '/abc'),
        served(api, 'POST', '/api/v1/links'),
        served(api, 'GET', '/api/v1/links/x'),
        served(api, 'GET', '/api/v1/links/x/stats'),
      ];
    };
    // Thresholds: analytics 500 ms, visits 750 (half of their 1.5 s deadline), reads 1 000, writes 2 000 (half of their 4 s here).
    expect(classes(400)).toEqual([true, true, true, true]);
    expect(classes(600)).toEqual([true, true, true, false]);
    expect(classes(800)).toEqual([false, true, true, false]);
    expect(classes(1100)).toEqual([false, true, false, false]);
    expect(classes(2100)).toEqual([false, false, false, false]);
  });
});
