import { Controller, Get, Inject, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { stringify } from 'csv-stringify';
import { Readable } from 'stream';
import { z } from 'zod';
import { AuditLog, OPERATOR_LOG, StoredAuditEntry } from '@shortlink/audit-domain';
import { guardCell } from '@shortlink/link-transfer';
import { ApiKeyGuard, AuthenticatedRequest, Contract } from '@shortlink/nest-platform';
import { auditCsvSchema, auditEntrySchema, auditPageSchema, auditQuery } from './audit.schemas';

const CSV_COLUMNS = [
  'at',
  'action',
  'actor_type',
  'actor_id',
  'actor_name',
  'on_behalf_of_id',
  'on_behalf_of_name',
  'target_type',
  'target_id',
  'target_domain',
  'client_address',
  'changes',
  'details',
  'id',
] as const;

const FILTERS =
  'Newest first. Filters: `actor` (an actor’s id), `action` (link.created, or a family: link), `target` (a link’s code, a key’s or tenant’s id), `from` (inclusive) and `to` (exclusive) as ISO 8601; `cursor` is the previous page’s nextCursor, bound to the filters (400 `INVALID_CURSOR` otherwise). `format=csv` answers every entry the filters select from the cursor on, as text/csv (formula cells guarded).';

/**
 * The audit logs (docs/design.md, "Audit log"): a tenant's, for keys with `audit:read` (the tenant's
 * first key, and its owners and admins); the operators', for keys with `admin`.
 */
@Controller('api/v1')
@UseGuards(ApiKeyGuard)
export class AuditLogController {
  constructor(@Inject(AuditLog) private readonly audit: AuditLog) {}

  @Get('audit-log')
  @Contract({
    summary: 'Your tenant’s audit log: who changed what, when, from where',
    operationId: 'listAuditLog',
    description: `Every change to links, keys and (later) members, one entry per request (a batch or bulk change with its count). ${FILTERS}`,
    tags: ['audit'],
    scope: 'audit:read',
    query: auditQuery,
    responses: { 200: { description: 'A page of entries', schema: auditPageSchema, alternatives: { 'text/csv': auditCsvSchema } } },
  })
  async tenantLog(@Req() req: AuthenticatedRequest, @Query() query: z.infer<typeof auditQuery>, @Res() reply: FastifyReply): Promise<void> {
    await this.answer(reply, req.principal!.tenantId, query, 'audit-log');
  }

  @Get('admin/audit-log')
  @Contract({
    summary: 'The operators’ audit log: tenants, plans, suspensions, tenant domains, moderation',
    operationId: 'listOperatorAuditLog',
    description: FILTERS,
    tags: ['admin'],
    scope: 'admin',
    query: auditQuery,
    responses: { 200: { description: 'A page of entries', schema: auditPageSchema, alternatives: { 'text/csv': auditCsvSchema } } },
  })
  async operatorLog(@Query() query: z.infer<typeof auditQuery>, @Res() reply: FastifyReply): Promise<void> {
    await this.answer(reply, OPERATOR_LOG, query, 'operator-audit-log');
  }

  private async answer(reply: FastifyReply, log: string, query: z.infer<typeof auditQuery>, name: string): Promise<void> {
    const { format, limit, ...filters } = query;
    reply.header('cache-control', 'no-store');
    if (format === 'csv') {
      // Checked before the first byte (a bad cursor or range is a problem, not a cut-off CSV); read as the client reads.
      const entries = this.audit.every(log, filters);
      const rows = Readable.from(csvRows(entries));
      reply
        .status(200)
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${name}.csv"`)
        .send(rows.pipe(stringify({ header: true, columns: [...CSV_COLUMNS], cast: { string: guardCell } })));
      return;
    }
    const page = await this.audit.list(log, { ...filters, limit });
    reply
      .status(200)
      .header('content-type', 'application/json; charset=utf-8')
      .send({ entries: page.entries.map(entryView), nextCursor: page.nextCursor });
  }
}

export function entryView(entry: StoredAuditEntry): z.infer<typeof auditEntrySchema> {
  return {
    id: entry.id,
    at: entry.at.toISOString(),
    action: entry.action,
    actor: { type: entry.actor.type, id: entry.actor.id, name: entry.actor.name, onBehalfOf: entry.actor.onBehalfOf ?? null },
    target: { ...entry.target },
    clientAddress: entry.clientAddress,
    changes: entry.changes as z.infer<typeof auditEntrySchema>['changes'],
    details: entry.details,
  };
}

async function* csvRows(entries: AsyncGenerator<StoredAuditEntry>): AsyncGenerator<string[]> {
  for await (const e of entries) {
    yield [
      e.at.toISOString(),
      e.action,
      e.actor.type,
      e.actor.id,
      e.actor.name,
      e.actor.onBehalfOf?.id ?? '',
      e.actor.onBehalfOf?.name ?? '',
      e.target.type,
      e.target.id ?? '',
      e.target.domain ?? '',
      e.clientAddress ?? '',
      e.changes ? JSON.stringify(e.changes) : '',
      e.details ? JSON.stringify(e.details) : '',
      e.id,
    ];
  }
}
