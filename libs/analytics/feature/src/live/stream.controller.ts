import { BeforeApplicationShutdown, Controller, Get, Inject, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { PassThrough } from 'stream';
import { z } from 'zod';
import type { BotFilter } from '@shortlink/clicks-domain';
import { ApiKeyGuard, AuthenticatedRequest, Contract } from '@shortlink/nest-platform';
import { parseEventId } from './event-id';
import { LiveClick, LiveClickHub } from './live-click-hub';
import { LiveFilter, matches, TagLookup } from './live-filter';

/** The tag look-up of the stream's tag filter (a LinkTagCache over the link shards). */
export const LIVE_TAG_LOOKUP = Symbol('LIVE_TAG_LOOKUP');

/** A comment line this often keeps proxies and clients from taking a quiet stream for a dead one. */
export const HEARTBEAT_MS = 15_000;

const streamSchema = z.string().meta({
  id: 'ClickEventStream',
  description:
    'Server-Sent Events, each with `id: <instance>.<n>` (n counts your events on that instance, no one else’s) and JSON `data`: ' +
    '`event: click` for each click as it happens, data a LiveClick `{id, time, domain, code, country, region, city, referer, device, browser, os, bot, variant, source, visitor}`; ' +
    '`event: lead` for each lead counted (POST /api/v1/track/lead, or a Stripe session with a click id), data `{id, time, domain, code, conversionId, eventName, customerId, clickId}` ' +
    '(`domain` and `code`: the link it is attributed to; `conversionId`: the webhook’s `conversion.id`); ' +
    '`event: sale` for each sale counted (POST /api/v1/track/sale, Stripe), the same fields plus `amount` (integer, the currency’s minor unit, negative for a refund), `currency` (ISO 4217) and `invoiceId` (or null); ' +
    '`event: gap` (data `{"lastEventId", "reason"}`, reason `expired` or `unknown`) first when a resume cannot be complete; ' +
    'a `: ping` comment every 15 s. Clients should ignore event types they do not know.',
});

/**
 * The live click stream (docs/design.md, "Live click stream"): `GET /api/v1/events/stream` as
 * Server-Sent Events, the tenant's clicks as this instance's consumer reads them from the click
 * topic, and its leads and sales from the conversions topic, filtered by link code, domain, tag and bots, resumable with Last-Event-ID over the replay
 * window. Same guard and scope as the other analytics routes (an API key, or a person's session).
 */
@Controller('api/v1/events')
@UseGuards(ApiKeyGuard)
export class StreamController implements BeforeApplicationShutdown {
  constructor(
    @Inject(LiveClickHub) private readonly hub: LiveClickHub,
    @Inject(LIVE_TAG_LOOKUP) private readonly tags: TagLookup,
  ) {}

  @Get('stream')
  @Contract({
    summary: "The tenant's clicks, leads and sales as they happen (Server-Sent Events)",
    operationId: 'streamEvents',
    description:
      'A `text/event-stream` that stays open: one `click` event per click of your links, and one `lead` or `sale` event per lead or sale counted ' +
      'for one of them (each once, a retried track call included), filtered by `code`, `domain`, `tag` (the link’s tags, ' +
      'read within 30 s of a change; for a lead or sale, the link it is attributed to) and `bots` (bot clicks excluded by default; `only` shows no leads or sales). ' +
      'Fed from the click and conversions topics, not by polling the store. Send the last `id` ' +
      'received as `Last-Event-ID` to resume: the events after it within the replay window (ANALYTICS_STREAM_REPLAY_EVENTS, ' +
      'ANALYTICS_STREAM_REPLAY_SECONDS) come first; an id older than the window, or of another instance, gets a `gap` event first. ' +
      'At most ANALYTICS_STREAM_MAX_PER_TENANT open streams per tenant and instance (429 STREAM_LIMIT_REACHED); a malformed ' +
      'Last-Event-ID is 400 INVALID_EVENT_ID.',
    tags: ['analytics'],
    scope: 'analytics:read',
    query: z.strictObject({
      code: z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 of A-Za-z0-9_-')
        .optional()
        .meta({ description: 'Only clicks of links with this code' }),
      domain: z
        .string()
        .max(253)
        .regex(/^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:\d{1,5})?$/, 'must be a host name')
        .optional()
        .meta({ description: 'Only clicks on this short domain' }),
      tag: z.string().min(1).max(50).optional().meta({ description: 'Only clicks of links carrying this tag' }),
      bots: z.enum(['exclude', 'include', 'only']).optional().meta({ description: 'Bot clicks: excluded by default' }),
    }),
    headers: z.object({
      'last-event-id': z
        .string()
        .max(64)
        .optional()
        .meta({ description: 'The id of the last event received: resume after it (400 INVALID_EVENT_ID when it is not one)' }),
    }),
    responses: {
      200: {
        description: 'The stream, open until the client closes it',
        contentType: 'text/event-stream',
        schema: streamSchema,
      },
    },
    errors: [400, 429],
  })
  stream(@Req() req: AuthenticatedRequest, @Query() q: { code?: string; domain?: string; tag?: string; bots?: BotFilter }, @Res() reply: FastifyReply): void {
    const lastEventId = parseEventId(req.headers['last-event-id']);
    const filter: LiveFilter = { code: q.code, domain: q.domain?.toLowerCase(), tag: q.tag?.trim(), bots: q.bots ?? 'exclude' };
    const body = new PassThrough();
    let queue: Promise<void> = Promise.resolve();
    let ended = false;
    const write = (text: string) => {
      if (!ended) body.write(text);
    };
    // One chain per stream: a tag look-up never lets a later event overtake an earlier one.
    const offer = (event: LiveClick) => {
      queue = queue.then(async () => {
        if (!ended && (await matches(filter, event, this.tags))) write(`id: ${event.view.id}\nevent: ${event.kind}\ndata: ${JSON.stringify(event.view)}\n\n`);
      });
    };
    const end = () => {
      if (ended) return;
      ended = true;
      clearInterval(heartbeat);
      subscription?.close();
      body.end();
    };
    // Throws STREAM_LIMIT_REACHED before anything is sent: a problem+json answer.
    const subscription = this.hub.subscribe(req.principal!.tenantId, lastEventId, offer, end);
    reply.raw.on('close', end);
    const heartbeat = setInterval(() => write(': ping\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    write(`retry: 2000\n: stream of ${this.hub.instanceId}\n\n`);
    if (subscription.gap) write(`event: gap\ndata: ${JSON.stringify({ lastEventId: req.headers['last-event-id'], reason: subscription.gap })}\n\n`);
    for (const event of subscription.replay) offer(event);
    reply
      .header('content-type', 'text/event-stream; charset=utf-8')
      .header('cache-control', 'no-cache, no-transform')
      .header('x-accel-buffering', 'no')
      .send(body);
  }

  beforeApplicationShutdown(): void {
    this.hub.endStreams();
  }
}
