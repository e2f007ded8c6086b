import { LINK_EVENT_KINDS, LinkChangeEvent, LinkEventKind, OutboxEvent, OutboxStamp } from '@shortlink/links-domain';

/** The columns of `link_events` an event is written with, in order (docs/design.md, "Edits reach every instance"). */
export const EVENT_COLUMNS = ['kind', 'link_id', 'tenant_id', 'domain', 'code', 'version', 'occurred_at', 'lease_owner', 'lease_until'] as const;
export const EVENT_SELECT = `SELECT id, ${EVENT_COLUMNS.join(', ')} FROM link_events`;

/** One event as its row's values (EVENT_COLUMNS order); times as the backend stores them. */
export function eventValues(e: LinkChangeEvent, stamp: OutboxStamp, now: number, time: (ms: number) => unknown): unknown[] {
  return [e.kind, e.linkId, e.tenantId, e.domain, e.code, e.version, time(now), stamp.owner, now + stamp.leaseMs];
}

export interface EventRow {
  id: string | number | bigint;
  kind: string;
  link_id: string | number | bigint;
  tenant_id: string;
  domain: string;
  code: string;
  version: number | string;
  occurred_at: Date | number;
}

export function eventFromRow(shard: string, r: EventRow): OutboxEvent {
  if (!(LINK_EVENT_KINDS as readonly string[]).includes(r.kind)) throw new Error(`link_events ${r.id}: unknown kind "${r.kind}"`);
  return {
    id: String(r.id),
    shard,
    kind: r.kind as LinkEventKind,
    linkId: String(r.link_id),
    tenantId: r.tenant_id,
    domain: r.domain,
    code: r.code,
    version: Number(r.version),
    occurredAt: new Date(r.occurred_at),
  };
}
