import 'reflect-metadata';
import type { IncomingMessage, ServerResponse } from 'http';
import { FrontDoor, FrontRoute, frontHandlerOf } from './front-door';

const request = (method: string, url: string) => ({ method, url }) as IncomingMessage;
const response = {} as ServerResponse;

class Codes {
  readonly seen: string[] = [];

  @FrontRoute({ methods: ['GET', 'HEAD'], path: '/{code}', pattern: /^\/([a-z]+)$/ })
  code(_req: IncomingMessage, _res: ServerResponse, match: RegExpExecArray): boolean {
    this.seen.push(match[1]);
    return match[1] !== 'pass';
  }
}

class Pings {
  @FrontRoute({ methods: ['GET'], path: '/ping', pattern: /^\/ping$/ })
  ping(): boolean {
    return true;
  }
}

describe('FrontRoute and FrontDoor', () => {
  it('answers a declared method and path with the match, and leaves other methods, paths and a declined request to Fastify', () => {
    const codes = new Codes();
    const handle = frontHandlerOf(codes)!;
    expect(handle(request('GET', '/abc'), response)).toBe(true);
    expect(handle(request('HEAD', '/xyz'), response)).toBe(true);
    expect(handle(request('POST', '/abc'), response)).toBe(false);
    expect(handle(request('GET', '/api/v1/links'), response)).toBe(false);
    expect(handle(request('GET', '/pass'), response)).toBe(false);
    expect(codes.seen).toEqual(['abc', 'xyz', 'pass']);
    expect(frontHandlerOf({})).toBeNull();
  });

  it('installs the routes of several objects as one handler, in order, and none when no object declares one', () => {
    const door = new FrontDoor();
    door.install([]);
    expect(door.handle).toBeNull();
    const codes = new Codes();
    door.install([new Pings(), codes]);
    expect(door.handle!(request('GET', '/ping'), response)).toBe(true);
    expect(door.handle!(request('GET', '/abc'), response)).toBe(true);
    expect(door.handle!(request('DELETE', '/abc'), response)).toBe(false);
    expect(codes.seen).toEqual(['abc']);
  });
});
