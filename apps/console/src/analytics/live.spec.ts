import { createServer, IncomingHttpHeaders, Server, ServerResponse } from 'http';
import type { AddressInfo } from 'net';
import { countLiveClicks, LiveState, parseEvents } from './live';

describe('parseEvents: Server-Sent Events out of a buffer', () => {
  it('returns the complete events, skips comments and keeps the incomplete rest', () => {
    const { events, rest } = parseEvents('retry: 2000\n: stream of a\n\nid: a.1\nevent: click\ndata: {"x":1}\n\n: ping\n\nid: a.2\nevent: cl');
    expect(events).toEqual([{ event: 'click', id: 'a.1', data: '{"x":1}' }]);
    expect(rest).toBe('id: a.2\nevent: cl');
    expect(parseEvents(`${rest}ick\ndata: {}\r\n\r\n`).events).toEqual([{ event: 'click', id: 'a.2', data: '{}' }]);
  });

  it('joins data lines and reads a gap event', () => {
    expect(parseEvents('event: gap\ndata: {"reason":\ndata: "expired"}\n\n').events).toEqual([{ event: 'gap', id: null, data: '{"reason":\n"expired"}' }]);
  });
});

describe('countLiveClicks over a real stream', () => {
  let server: Server;
  let url: string;
  const requests: IncomingHttpHeaders[] = [];
  let open: ServerResponse | null = null;

  beforeAll(async () => {
    let n = 0;
    server = createServer((req, res) => {
      requests.push(req.headers);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('retry: 2000\n\n');
      if (requests.length === 1) {
        // Two clicks, then the stream drops.
        res.write(`id: s.${++n}\nevent: click\ndata: {}\n\n: ping\n\nid: s.${++n}\nevent: cl`);
        setTimeout(() => res.end('ick\ndata: {}\n\n'), 20);
      } else {
        res.write(`event: gap\ndata: {}\n\nid: s.${++n}\nevent: click\ndata: {}\n\n`);
        open = res;
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/stream`;
  });

  afterAll(async () => {
    open?.end();
    await new Promise((resolve) => server.close(resolve));
  });

  it('counts the clicks, and after a drop reconnects with the last id, telling of a gap', async () => {
    const states: LiveState[] = [];
    const stop = countLiveClicks(url, (s) => states.push(s), 50);
    const deadline = Date.now() + 5000;
    while (!states.some((s) => s.clicks === 3) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    stop();
    expect(states.at(-1)).toEqual({ state: 'open', clicks: 3, note: 'some clicks may be missing' });
    expect(states.some((s) => s.state === 'closed' && s.clicks === 2)).toBe(true);
    expect(requests.map((h) => h['last-event-id'])).toEqual([undefined, 's.2']);
    expect(requests[0].accept).toBe('text/event-stream');
  });
});
