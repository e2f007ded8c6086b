import { createHash } from 'crypto';
import { DomainError, ErrorCode } from '@shortlink/core';
import { CodeStrategy } from '@shortlink/link-codes';
import { Link } from '@shortlink/links-domain';
import { LinkCreation, PreparedLink } from '@shortlink/links-domain';
import type { ParsedTarget } from '@shortlink/url-policy';

/** One row of a batch request as the API layer read it. */
export interface BatchRow {
  /** Position in the request, from 0. */
  readonly index: number;
  /** The row's JSON as received (hashed for the idempotency check). */
  readonly text: string;
  /** The create, when the row had the shape of one; else `error`. */
  readonly input?: Omit<LinkCreation, 'tenantId'>;
  /** `input.url` parsed beforehand by the URL policy's fixed part (on a worker thread); absent: parsed when prepared. */
  readonly target?: ParsedTarget;
  /** Refused before the domain (not JSON, not the shape of a create, past the row limit). */
  readonly error?: DomainError;
}

export type BatchOutcome = { readonly index: number; readonly link: Link } | { readonly index: number; readonly error: DomainError };

/** A row on its way to a shard. */
export interface Candidate {
  readonly pos: number;
  readonly prepared: PreparedLink;
  link: Link;
  attempt: number;
}

/** A chunk after validation, quota and (with a key) its record: ready to be written, or replayed. */
export interface PreparedChunk {
  readonly seq: number;
  readonly rows: readonly BatchRow[];
  /** Stored answer lines of an earlier attempt. */
  readonly replay?: string;
  readonly outcomes: Array<BatchOutcome | undefined>;
  readonly candidates: Candidate[];
  /** An earlier attempt may have written some rows: look before inserting. */
  readonly recovering: boolean;
  /** The chunk has a record, which keeps its answer once final. */
  readonly keepResults: boolean;
  readonly spareIds: bigint[];
}

/** SHA-256 over the rows' texts in order: a chunk's identity for the idempotency check. */
export function hashRows(rows: readonly BatchRow[]): string {
  const hash = createHash('sha256');
  for (const row of rows) hash.update(row.text).update('\n');
  return hash.digest('hex');
}

/** Every row of the chunk answered with `error`; nothing written. */
export function refusedChunk(seq: number, rows: readonly BatchRow[], error: DomainError): PreparedChunk {
  return { seq, rows, outcomes: rows.map((row) => ({ index: row.index, error })), candidates: [], spareIds: [], recovering: false, keepResults: false };
}

export const reused = () =>
  new DomainError(ErrorCode.IDEMPOTENCY_KEY_REUSED, 'this Idempotency-Key was used with other rows; use a new key for a different batch');

export function asDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  const why = 'a store did not answer; retry the batch (with its Idempotency-Key nothing is created twice)';
  return new DomainError(ErrorCode.DEPENDENCY_UNAVAILABLE, why, { retryAfterSeconds: 1 }, { cause: error });
}

/**
 * The link of a prepared row under `id` (its alias, or the code the strategy gives the id at this
 * attempt). Field by field, not `{ ...rest }` of the prepared create: the two copies were ~5 % of a batch's CPU.
 */
export function linkOf(p: PreparedLink, id: bigint, codes: CodeStrategy, attempt: number): Link {
  return {
    id: id.toString(),
    domain: p.domain,
    code: p.alias ?? codes.codeFor(id, p.targetUrl, attempt),
    targetUrl: p.targetUrl,
    tenantId: p.tenantId,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
    expiresAt: p.expiresAt,
    status: p.status,
    redirectType: p.redirectType,
    version: p.version,
    moderation: p.moderation,
    moderationReason: p.moderationReason,
    title: p.title,
    tags: p.tags,
    maxClicks: p.maxClicks,
    passwordHash: p.passwordHash,
    utm: p.utm,
    forwardQuery: p.forwardQuery,
    redirectRules: p.redirectRules,
    variants: p.variants,
    clicksPerIpPerMinute: p.clicksPerIpPerMinute,
    crawlable: p.crawlable,
    passwordRememberHours: p.passwordRememberHours,
    social: p.social,
    appTargets: p.appTargets,
    trackConversions: p.trackConversions,
    conversionParam: p.conversionParam,
    ...(p.tagConversionParam ? { tagConversionParam: p.tagConversionParam } : {}),
  };
}
