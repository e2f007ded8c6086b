import { EventEmitter } from 'events';
import type { FastifyReply } from 'fastify';
import { PassThrough } from 'stream';
import { InProcessClickLog, MemoryClickEventSource } from '@shortlink/bus';
import { ClickEvent } from '@shortlink/clicks-domain';
import type { AuthenticatedRequest } from '@shortlink/nest-platform';
import { UserAgentClassifier } from '@shortlink/visitors-domain';
import { LiveClickHub } from './live-click-hub';
import { TagLookup } from './live-filter';
import { HEARTBEAT_MS, StreamController } from './stream.controller';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
let seq = 0;
const click = (over: Partial<ClickEvent> = {}): ClickEvent => ({
  producer: 'p1',
  seq: seq++,
  kind: 'click',
  occurredAt: Date.now(),
  tenantId: 't1',
  linkId: '1',
  domain: 'sho.rt',
  code: 'abc',
  visitor: 7,
  country: null,
  region: null,
  city: null,
  source: 'link',
  refererHost: null,
  userAgent: CHROME,
  variant: null,
  ...over,
});

/** What the controller hands Fastify: the headers and the body stream, read as text. */
function fakeReply() {
  const headers: Record<string, string> = {};
  const raw = new EventEmitter();
  let text = '';
  let ended = false;
  const reply = {
    raw,
    header: (k: string, v: string) => ((headers[k] = v), reply),
    send: (body: PassThrough) => {
      body.setEncoding('utf8');
      body.on('data', (chunk: string) => (text += chunk));
      body.on('end', () => (ended = true));
      return reply;
    },
  };
  return { reply: reply as unknown as FastifyReply, headers, raw, text: () => text, ended: () => ended };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('StreamController', () => {
  let hub: LiveClickHub;
  let tags: TagLookup;
  let controller: StreamController;
  const request = (lastEventId?: string) =>
    ({ principal: { tenantId: 't1' }, headers: lastEventId ? { 'last-event-id': lastEventId } : {} }) as AuthenticatedRequest;
  const deliver = (...events: ClickEvent[]) => hub.accept({ messages: events.map((event) => ({ partition: 0, offset: '0', recordedAt: 0, event })) });

  beforeEach(() => {
    hub = new LiveClickHub(new MemoryClickEventSource(new InProcessClickLog(), { groupId: 'live' }), new UserAgentClassifier(), {
      replayEvents: 2,
      replaySeconds: 300,
      maxPerTenant: 1,
      instanceId: 'i1',
    });
    tags = { tagsOf: async () => [] };
    controller = new StreamController(hub, { tagsOf: (c) => tags.tagsOf(c) });
  });
  afterEach(() => jest.useRealTimers());

  it('answers an event stream: an opening comment, then each click as `id`, `event: click` and JSON data', async () => {
    const r = fakeReply();
    controller.stream(request(), { bots: 'exclude' }, r.reply);
    expect(r.headers).toMatchObject({
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    });
    deliver(click({ code: 'one' }), click({ code: 'elsewhere', tenantId: 't2' }));
    await flush();
    const [head, event] = r.text().split('\n\n');
    expect(head).toBe('retry: 2000\n: stream of i1');
    expect(event.split('\n').slice(0, 2)).toEqual(['id: i1.1', 'event: click']);
    expect(JSON.parse(event.split('\n')[2].slice('data: '.length))).toMatchObject({ id: 'i1.1', code: 'one', domain: 'sho.rt' });
    expect(r.text()).not.toContain('elsewhere');
  });

  it('writes a lead and a sale as `event: lead` and `event: sale` in the same sequence as the clicks', async () => {
    const r = fakeReply();
    controller.stream(request(), {}, r.reply);
    deliver(click({ code: 'one' }));
    const base = { id: 'cnv_1', key: 'lead:c1', tenantId: 't1', at: 0, linkId: '1', domain: 'sho.rt', code: 'one', customerId: 'c1', eventName: 'Sign up' };
    hub.acceptConversions({
      messages: [
        { offset: '0', event: { ...base, kind: 'lead', clickId: 'x', amount: 0, currency: '', invoiceId: null, metadata: null } },
        {
          offset: '1',
          event: { ...base, id: 'cnv_2', key: 'invoice:i', kind: 'sale', clickId: 'x', amount: 900, currency: 'EUR', invoiceId: 'i', metadata: null },
        },
      ],
    });
    await flush();
    const events = r.text().split('\n\n').slice(1, -1);
    expect(events.map((e) => e.split('\n').slice(0, 2))).toEqual([
      ['id: i1.1', 'event: click'],
      ['id: i1.2', 'event: lead'],
      ['id: i1.3', 'event: sale'],
    ]);
    expect(JSON.parse(events[2].split('\n')[2].slice('data: '.length))).toMatchObject({ code: 'one', customerId: 'c1', amount: 900, currency: 'EUR' });
  });

  it('writes a gap event first, then the window, for an id older than the window', async () => {
    deliver(click({ code: 'c1' }), click({ code: 'c2' }), click({ code: 'c3' }), click({ code: 'c4' })); // the window holds 3 and 4
    const r = fakeReply();
    controller.stream(request('i1.1'), { bots: 'exclude' }, r.reply);
    await flush();
    const events = r.text().split('\n\n').slice(1, -1);
    expect(events[0]).toBe('event: gap\ndata: {"lastEventId":"i1.1","reason":"expired"}');
    expect(events.slice(1).map((e) => e.split('\n')[0])).toEqual(['id: i1.3', 'id: i1.4']);
  });

  it('keeps the order of clicks when a tag look-up of an earlier one is slower', async () => {
    let release!: () => void;
    const slow = new Promise<void>((r) => (release = r));
    tags = { tagsOf: async (c) => (c.code === 'first' ? (await slow, ['t']) : ['t']) };
    const r = fakeReply();
    controller.stream(request(), { tag: 't', bots: 'exclude' }, r.reply);
    deliver(click({ code: 'first' }), click({ code: 'second' }));
    await flush();
    expect(r.text()).not.toContain('event: click');
    release();
    await flush();
    await flush();
    const codes = [...r.text().matchAll(/"code":"(\w+)"/g)].map((m) => m[1]);
    expect(codes).toEqual(['first', 'second']);
  });

  it('sends a ping comment every 15 s, and frees the slot when the client goes', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    const r = fakeReply();
    controller.stream(request(), { bots: 'exclude' }, r.reply);
    expect(() => controller.stream(request(), { bots: 'exclude' }, fakeReply().reply)).toThrow(expect.objectContaining({ code: 'STREAM_LIMIT_REACHED' }));
    jest.advanceTimersByTime(HEARTBEAT_MS * 2);
    await flush();
    expect(r.text().match(/: ping\n\n/g)).toHaveLength(2);
    r.raw.emit('close');
    expect(hub.openStreams('t1')).toBe(0);
    jest.advanceTimersByTime(HEARTBEAT_MS);
    await flush();
    expect(r.text().match(/: ping\n\n/g)).toHaveLength(2);
    controller.stream(request(), { bots: 'exclude' }, fakeReply().reply);
  });

  it('ends every open stream before the server closes', async () => {
    const r = fakeReply();
    controller.stream(request(), { bots: 'exclude' }, r.reply);
    controller.beforeApplicationShutdown();
    await flush();
    expect(r.ended()).toBe(true);
    expect(hub.openStreams('t1')).toBe(0);
  });

  it('answers INVALID_EVENT_ID before anything is sent', () => {
    const r = fakeReply();
    expect(() => controller.stream(request('garbage'), { bots: 'exclude' }, r.reply)).toThrow(expect.objectContaining({ code: 'INVALID_EVENT_ID' }));
    expect(r.headers).toEqual({});
    expect(hub.openStreams('t1')).toBe(0);
  });
});
