import type { AuditAction, AuditActorType, AuditEntry, AuditQuery, AuditTarget, StoredAuditEntry } from '@shortlink/audit-domain';
import { toDate } from '@shortlink/sql';

type DbDate = Date | number | string;

export interface AuditRow {
  seq: string | number | bigint;
  id: string;
  log_id: string;
  at: DbDate;
  actor_type: string;
  actor_id: string;
  actor_name: string;
  on_behalf_of_id: string | null;
  on_behalf_of_name: string | null;
  action: string;
  target_type: string;
  target_id: string | null;
  target_domain: string | null;
  client_address: string | null;
  changes: string | null;
  details: string | null;
}

/** Columns of `audit_log` as both backends insert them (the sequence number is the database's). */
const INSERT_COLUMNS = [
  'id',
  'log_id',
  'at',
  'actor_type',
  'actor_id',
  'actor_name',
  'on_behalf_of_id',
  'on_behalf_of_name',
  'action',
  'target_type',
  'target_id',
  'target_domain',
  'client_address',
  'changes',
  'details',
] as const;
export const AUDIT_COLUMNS = ['seq', ...INSERT_COLUMNS].join(', ');

/** Column widths (migrations): longer text is cut rather than refused, as MySQL's strict mode would. */
const WIDTH = { actor_id: 64, actor_name: 320, on_behalf_of_id: 64, on_behalf_of_name: 320, target_id: 255, target_domain: 253, client_address: 64 } as const;
const clip = (value: string | null, width: number) => (value === null ? null : value.slice(0, width));

/** How a backend writes a time (MySQL: a DATETIME(3); SQLite: epoch milliseconds). */
export type TimeParam = (d: Date) => Date | number;

/**
 * `INSERT INTO audit_log … VALUES (…), (…)` for `entries`; `onDuplicate` is the backend's way of
 * skipping an id stored already (appends are retried). Without it, a duplicate fails the statement,
 * and with it the transaction of the change the entry belongs to.
 */
export function auditInsert(entries: readonly AuditEntry[], time: TimeParam, verb: string, suffix = ''): { sql: string; params: unknown[] } {
  const row = `(${INSERT_COLUMNS.map(() => '?').join(', ')})`;
  const params = entries.flatMap((e) => [
    e.id,
    e.log,
    time(e.at),
    e.actor.type,
    clip(e.actor.id, WIDTH.actor_id),
    clip(e.actor.name, WIDTH.actor_name),
    clip(e.actor.onBehalfOf?.id ?? null, WIDTH.on_behalf_of_id),
    clip(e.actor.onBehalfOf?.name ?? null, WIDTH.on_behalf_of_name),
    e.action,
    e.target.type,
    clip(e.target.id, WIDTH.target_id),
    clip(e.target.domain, WIDTH.target_domain),
    clip(e.clientAddress, WIDTH.client_address),
    e.changes === null ? null : JSON.stringify(e.changes),
    e.details === null ? null : JSON.stringify(e.details),
  ]);
  return { sql: `${verb} audit_log (${INSERT_COLUMNS.join(', ')}) VALUES ${entries.map(() => row).join(', ')}${suffix}`, params };
}

/**
 * One page of a log, newest first: the query's filters, then the position after the previous page
 * (`at <= t AND (at < t OR seq < s)`: the first part is the index range), as in the links listing.
 */
export function auditListSql(q: AuditQuery, time: TimeParam, seq: (s: string) => unknown): { sql: string; params: unknown[] } {
  const where = ['log_id = ?'];
  const params: unknown[] = [q.log];
  const add = (clause: string, ...values: unknown[]) => {
    where.push(clause);
    params.push(...values);
  };
  if (q.actorId !== undefined) add('actor_id = ?', q.actorId);
  if (q.targetId !== undefined) add('target_id = ?', q.targetId);
  if (q.action !== undefined) add('action = ?', q.action);
  // `family.` up to (not including) `family/`: every `family.*` action, by the index order, without LIKE's wildcards.
  if (q.actionFamily !== undefined) add('action >= ? AND action < ?', `${q.actionFamily}.`, `${q.actionFamily}/`);
  if (q.from !== undefined) add('at >= ?', time(q.from));
  if (q.to !== undefined) add('at < ?', time(q.to));
  if (q.after) add('at <= ? AND (at < ? OR seq < ?)', time(q.after.at), time(q.after.at), seq(q.after.seq));
  return { sql: `SELECT ${AUDIT_COLUMNS} FROM audit_log WHERE ${where.join(' AND ')} ORDER BY at DESC, seq DESC LIMIT ?`, params: [...params, q.limit] };
}

export const auditFromRow = (row: AuditRow): StoredAuditEntry => ({
  seq: String(row.seq),
  id: row.id,
  log: row.log_id,
  at: toDate(row.at),
  actor: {
    type: row.actor_type as AuditActorType,
    id: row.actor_id,
    name: row.actor_name,
    // Absent when none, as an entry without one was appended.
    ...(row.on_behalf_of_id === null ? {} : { onBehalfOf: { id: row.on_behalf_of_id, name: row.on_behalf_of_name ?? '' } }),
  },
  action: row.action as AuditAction,
  target: { type: row.target_type as AuditTarget['type'], id: row.target_id, domain: row.target_domain },
  clientAddress: row.client_address,
  changes: row.changes === null ? null : JSON.parse(row.changes),
  details: row.details === null ? null : JSON.parse(row.details),
});
