import { Body, Controller, Delete, Headers, HttpCode, Inject, OnModuleDestroy, OnModuleInit, Patch, Post, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Readable } from 'stream';
import { z } from 'zod';
import type { AppConfig } from '@shortlink/config';
import { DomainError, ErrorCode } from '@shortlink/core';
import type { AuditContext } from '@shortlink/audit-domain';
import { EDITABLE_FIELDS, LINK_COMMANDS, LinkCommands, LinkCounts, LinkEdit, LinkService } from '@shortlink/links-domain';
import { BatchCreator, BatchOutcome, BatchRow, BulkLinks, BulkOutcome, BulkSelection } from '@shortlink/link-batch';
import {
  ApiKeyGuard,
  APP_CONFIG,
  auditContextOf,
  AuthenticatedRequest,
  Contract,
  Principal,
  problemFor,
  StreamedBody,
  StreamedRoutes,
} from '@shortlink/nest-platform';
import { BatchSlots, PlanRateLimiter } from '@shortlink/tenants-domain';
import { LinkPresenter } from '../link-presenter';
import { linkCreationSchema } from '../link.schemas';
import { BATCH_MEDIA_TYPES, batchBodySchema, batchLineSchema, bulkDeleteSchema, bulkEditSchema, bulkLineSchema, idempotencyHeader } from './batch.schemas';
import { RawRow, readRows } from './row-reader';
import { domainErrorOf } from './row-shaper';
import { RowWorkers } from './row-workers';

const TAGS = ['links'];
const BATCH_PATH = '/api/v1/links/batch';
/** A row may be as large as a single create's body. */
const MAX_ROW_BYTES = 1_048_576;
const NDJSON = 'application/x-ndjson; charset=utf-8';
const WOULD_WAIT = Symbol('would wait');

/** Resolves with WOULD_WAIT at the next turn of the event loop. */
const nextTurn = () => new Promise<typeof WOULD_WAIT>((resolve) => setImmediate(resolve, WOULD_WAIT));

/** Rows shaped together on a worker thread, and groups read ahead of the chunk being written. */
const ROW_GROUP = 250;
const GROUPS_AHEAD = 4;

/**
 * Batch creation and bulk changes (docs/design.md, "Batch creation"). Both answer NDJSON, a line per
 * row or link in order, streamed as it is produced: the next rows are read only as fast as the
 * client reads the answer.
 */
@Controller('api/v1/links')
@UseGuards(ApiKeyGuard)
export class BatchController implements OnModuleInit, OnModuleDestroy {
  private readonly workers: RowWorkers;

  constructor(
    @Inject(BatchCreator) private readonly creator: BatchCreator,
    @Inject(BulkLinks) private readonly bulk: BulkLinks,
    @Inject(LinkPresenter) private readonly present: LinkPresenter,
    @Inject(PlanRateLimiter) private readonly plans: PlanRateLimiter,
    @Inject(BatchSlots) private readonly slots: BatchSlots,
    @Inject(StreamedRoutes) private readonly streamed: StreamedRoutes,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LINK_COMMANDS) private readonly commands: LinkCommands<AuditContext>,
    @Inject(LinkService) links: LinkService,
  ) {
    this.workers = new RowWorkers(config.batch.workers, links.targetLists());
  }

  onModuleInit(): void {
    // The row workers start with the first batch, not here: loading their code takes CPU the app's start needs.
    const { maxBodyBytes, requestTimeoutMs } = this.config.batch;
    this.streamed.register({ method: 'POST', path: BATCH_PATH, mediaTypes: [...BATCH_MEDIA_TYPES], maxBytes: maxBodyBytes, timeoutMs: requestTimeoutMs });
  }

  async onModuleDestroy(): Promise<void> {
    await this.workers.close();
  }

  @Post('batch')
  @HttpCode(200)
  @Contract({
    summary: 'Create up to 100 000 links in one request',
    operationId: 'createLinksBatch',
    description:
      'NDJSON (one create per line) or a JSON array, read as it arrives. The answer is NDJSON, one line per row in order: `{row, status: 201, link}` or `{row, status, problem}`; one bad row fails alone. The request counts once against the plan’s request limit; each created row counts against its daily batch rows (`QUOTA_EXCEEDED` beyond). A tenant runs at most its plan’s number of batch requests at once (429 `BATCH_CONCURRENCY_LIMIT` with Retry-After beyond). With `Idempotency-Key`, a retry (also after a crash) answers the same lines and creates nothing twice; the same key with other rows is 422 `IDEMPOTENCY_KEY_REUSED`, and while the first attempt still runs 409 `IDEMPOTENCY_KEY_IN_USE`.',
    tags: TAGS,
    scope: 'links:write',
    headers: idempotencyHeader,
    body: batchBodySchema,
    bodyContentTypes: [...BATCH_MEDIA_TYPES],
    bodyByMediaType: { 'application/x-ndjson': linkCreationSchema },
    streamedBody: true,
    responses: { 200: { description: 'One line per row, in request order', schema: batchLineSchema, contentType: 'application/x-ndjson' } },
    errors: [409, 413, 415, 422, 429],
  })
  async batch(
    @Req() req: AuthenticatedRequest,
    @Body() body: unknown,
    @Headers('idempotency-key') key: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    if (!(body instanceof StreamedBody))
      throw new DomainError(ErrorCode.VALIDATION_FAILED, 'send the rows as application/x-ndjson or a JSON array (application/json)', { field: 'body' });
    const principal = req.principal!;
    const context = auditContextOf(req);
    const idempotencyKey = idempotencyKeyOf(key);
    // Held until the answer has ended or the connection closed, whichever way the batch ends.
    const slot = await this.slots.acquire(principal.tenantId, principal.plan);
    reply.raw.once('close', () => slot.release());
    let run;
    // Rows answered by this request (a retry's recorded answers are not counted again): one audit entry when it ends.
    const counts = { count: 0, failed: 0 };
    try {
      run = await this.creator.start({
        tenantId: principal.tenantId,
        idempotencyKey,
        rows: this.rows(body, idempotencyKey !== null),
        quota: (rows) => this.quota(principal, rows),
        render: (outcome) => {
          if ('link' in outcome) counts.count++;
          else counts.failed++;
          return this.line(outcome);
        },
      });
    } catch (error) {
      slot.release();
      throw error;
    }
    const lines = thenRecord(run.lines(), () => this.commands.batchEnded(context, principal.tenantId, counts));
    reply.status(200).header('content-type', NDJSON).header('cache-control', 'no-store').send(Readable.from(lines));
  }

  @Patch('bulk')
  @HttpCode(200)
  @Contract({
    summary: 'Edit up to 10 000 links at once (by code or by tag)',
    operationId: 'updateLinksBulk',
    description:
      'Applies one edit to each link as PATCH /api/v1/links/{code} would (every cache layer told). NDJSON answer, one line per link: `{code, domain, status: 200, link}` or `{code, domain, status, problem}`.',
    tags: TAGS,
    scope: 'links:write',
    body: bulkEditSchema,
    responses: { 200: { description: 'One line per link', schema: bulkLineSchema, contentType: 'application/x-ndjson' } },
    errors: [413, 415],
  })
  async bulkEdit(@Req() req: AuthenticatedRequest, @Body() body: z.infer<typeof bulkEditSchema>, @Res() reply: FastifyReply): Promise<void> {
    const tenantId = req.principal!.tenantId;
    const context = auditContextOf(req);
    const edit: LinkEdit = Object.fromEntries(EDITABLE_FIELDS.filter((f) => f in body.edit).map((f) => [f, (body.edit as Record<string, unknown>)[f]]));
    const ids = await this.bulk.select(tenantId, this.selection(body));
    this.stream(reply, this.bulk.edit(tenantId, ids, edit), (counts) => this.commands.bulkEnded(context, tenantId, edit, counts, body));
  }

  @Delete('bulk')
  @HttpCode(200)
  @Contract({
    summary: 'Delete up to 10 000 links at once (by code or by tag)',
    operationId: 'deleteLinksBulk',
    description:
      'Deletes each link as DELETE /api/v1/links/{code} would. NDJSON answer, one line per link: `{code, domain, status: 204}` or `{code, domain, status, problem}`.',
    tags: TAGS,
    scope: 'links:write',
    body: bulkDeleteSchema,
    responses: { 200: { description: 'One line per link', schema: bulkLineSchema, contentType: 'application/x-ndjson' } },
    errors: [413, 415],
  })
  async bulkDelete(@Req() req: AuthenticatedRequest, @Body() body: z.infer<typeof bulkDeleteSchema>, @Res() reply: FastifyReply): Promise<void> {
    const tenantId = req.principal!.tenantId;
    const context = auditContextOf(req);
    const ids = await this.bulk.select(tenantId, this.selection(body));
    this.stream(reply, this.bulk.remove(tenantId, ids), (counts) => this.commands.bulkEnded(context, tenantId, null, counts, body));
  }

  /**
   * Each raw row parsed and shaped like a single create's body (the same contract, the same errors),
   * its `url` parsed by the URL policy's fixed part: on the worker threads (RowWorkers), groups of
   * ROW_GROUP rows, up to GROUPS_AHEAD of them in flight while the request's thread writes the chunk
   * before them (docs/design.md, "Batch creation"). Every row read before the body broke off is
   * handed on before its error, as when the rows were shaped one by one.
   */
  private async *rows(body: StreamedBody, hashed: boolean): AsyncGenerator<BatchRow> {
    const raw = readRows(body.chunks(), body.mediaType, { maxRows: this.config.batch.maxRows, maxRowBytes: MAX_ROW_BYTES })[Symbol.asyncIterator]();
    const ahead: Array<Promise<BatchRow[]>> = [];
    let ended = false;
    let broken: { error: unknown } | null = null;
    // A group takes the rows already read and no more: a body that trickles (a client streaming rows
    // as it makes them) has each row written as it comes, not once 250 have come.
    let pending: Promise<IteratorResult<RawRow>> | null = null;
    const readGroup = async (waitForFirst: boolean) => {
      const group: RawRow[] = [];
      // One turn of the event loop from the group's first row: the rows that are there by then are
      // already read (one timer a group, not one a row).
      let turn: Promise<typeof WOULD_WAIT> | null = waitForFirst ? null : nextTurn();
      try {
        while (group.length < ROW_GROUP) {
          const next = (pending ??= raw.next());
          const row = turn === null ? await next : await Promise.race([next, turn]);
          if (row === WOULD_WAIT) break;
          pending = null;
          if (row.done) {
            ended = true;
            break;
          }
          group.push(row.value);
          turn ??= nextTurn();
        }
      } catch (error) {
        pending = null;
        broken = { error };
      }
      if (group.length) ahead.push(this.shapeGroup(group, hashed));
    };
    for (;;) {
      while (!ended && !broken && ahead.length < GROUPS_AHEAD) {
        const before = ahead.length;
        await readGroup(before === 0);
        if (ahead.length === before) break;
      }
      const next = ahead.shift();
      if (!next) break;
      yield* await next;
    }
    if (broken) throw (broken as { error: unknown }).error;
  }

  /** One group of raw rows shaped on a worker thread, in order; rows the reader refused keep their error. */
  private async shapeGroup(group: readonly RawRow[], hashed: boolean): Promise<BatchRow[]> {
    const texts: string[] = [];
    for (const r of group) if ('text' in r) texts.push(r.text);
    const shaped = texts.length ? await this.workers.shape(texts, hashed) : [];
    let k = 0;
    return group.map((r): BatchRow => {
      if ('error' in r) return { index: r.index, text: '', error: r.error };
      const s = shaped[k++];
      const text = s.text ?? r.text;
      if ('error' in s) return { index: r.index, text, error: domainErrorOf(s.error) };
      return { index: r.index, text, input: s.input as BatchRow['input'], target: s.target };
    });
  }

  private async quota(principal: Principal, rows: number): Promise<{ granted: number; refusal: DomainError }> {
    const { granted, decision } = await this.plans.batchRows(principal.tenantId, principal.plan, rows);
    const refusal = new DomainError(ErrorCode.QUOTA_EXCEEDED, `the ${principal.plan} plan allows ${decision.limit} batch rows a day; this row is beyond them`, {
      limit: decision.limit,
      retryAfterSeconds: decision.resetSeconds,
    });
    return { granted, refusal };
  }

  private line(outcome: BatchOutcome): string {
    // The same text as JSON.stringify({ row, status, link: view }), cheaper (LinkPresenter.viewJson).
    if ('link' in outcome) return `{"row":${outcome.index},"status":201,"link":${this.present.viewJson(outcome.link)}}`;
    const problem = problemFor(outcome.error);
    return JSON.stringify({ row: outcome.index, status: problem.status, problem });
  }

  private selection(body: { links?: Array<string | { code: string; domain?: string }>; tag?: string; domain?: string }): BulkSelection {
    if (body.tag !== undefined) return { tag: body.tag, domain: body.domain?.toLowerCase() };
    return { links: body.links!.map((l) => (typeof l === 'string' ? this.present.id(l, body.domain) : this.present.id(l.code, l.domain ?? body.domain))) };
  }

  /** The outcomes as NDJSON lines; `record` gets what they changed once the answer has ended or the client left. */
  private stream(reply: FastifyReply, outcomes: AsyncGenerator<BulkOutcome>, record: (counts: LinkCounts) => Promise<void>): void {
    const present = this.present;
    const counts = { count: 0, failed: 0 };
    async function* lines() {
      for await (const o of outcomes) {
        const head = { code: o.id.code, domain: o.id.domain };
        if ('error' in o) {
          counts.failed++;
          const problem = problemFor(o.error);
          yield JSON.stringify({ ...head, status: problem.status, problem }) + '\n';
          continue;
        }
        counts.count++;
        if ('link' in o) yield JSON.stringify({ ...head, status: 200, link: present.view(o.link) }) + '\n';
        else yield JSON.stringify({ ...head, status: 204 }) + '\n';
      }
    }
    reply
      .status(200)
      .header('content-type', NDJSON)
      .header('cache-control', 'no-store')
      .send(Readable.from(thenRecord(lines(), () => record(counts))));
  }
}

/** The lines, then (however the answer ends: done, failed, or the client gone) the request's audit entry. */
async function* thenRecord(lines: AsyncGenerator<string>, record: () => Promise<void>): AsyncGenerator<string> {
  try {
    yield* lines;
  } finally {
    await record();
  }
}

/** Idempotency-Key: 1-255 visible ASCII characters (as the draft standard's examples), or none. */
function idempotencyKeyOf(header: string | undefined): string | null {
  if (header === undefined) return null;
  if (!/^[\x21-\x7e]{1,255}$/.test(header))
    throw new DomainError(ErrorCode.VALIDATION_FAILED, 'Idempotency-Key must be 1-255 visible ASCII characters', { header: 'idempotency-key' });
  return header;
}
