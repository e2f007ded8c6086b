import { DomainError, ErrorCode } from '@shortlink/core';
import { checkAgainst, jsonDepth, MAX_JSON_DEPTH } from '@shortlink/nest-platform';
import { parseTarget, ParsedTarget } from '@shortlink/url-policy';
import { linkCreationSchema } from '../link.schemas';

/** The URL policy's fixed lists a row's `url` is parsed with (UrlPolicy.fixedLists). */
export interface TargetLists {
  readonly shortDomains: readonly string[];
  readonly shorteners: readonly string[];
}

/** A DomainError as plain data (it crosses a thread by structured clone). */
export interface PlainError {
  readonly code: ErrorCode;
  readonly message: string;
  readonly details: Readonly<Record<string, unknown>>;
}

/**
 * One row's text, shaped (docs/design.md, "Batch creation"): parsed, depth-checked and held to the
 * single create's contract; its `url` parsed by the URL policy's fixed part (`target`). `text` is the
 * row's parsed form re-serialised, for the idempotency hash, only when it was asked for.
 */
export type ShapedRow =
  { readonly input: Record<string, unknown>; readonly target?: ParsedTarget; readonly text?: string } | { readonly error: PlainError; readonly text?: string };

const plain = (e: DomainError): PlainError => ({ code: e.code, message: e.message, details: e.details });
export const domainErrorOf = (e: PlainError): DomainError => new DomainError(e.code, e.message, e.details);

/**
 * The rows' texts shaped, in order: what a batch's worker thread does (row-worker.ts), and the
 * request's own thread with BATCH_WORKERS=0. Pure: the same texts give the same rows on any thread.
 */
export function shapeRows(texts: readonly string[], hashed: boolean, lists: TargetLists): ShapedRow[] {
  return texts.map((text) => shapeRow(text, hashed, lists));
}

function shapeRow(raw: string, hashed: boolean, lists: TargetLists): ShapedRow {
  if (jsonDepth(raw) > MAX_JSON_DEPTH)
    return { error: plain(new DomainError(ErrorCode.JSON_TOO_DEEP, `a row is nested deeper than ${MAX_JSON_DEPTH} levels`)) };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { error: plain(new DomainError(ErrorCode.INVALID_JSON, 'this row is not JSON')) };
  }
  // The hash of a row is over its parsed form: NDJSON and an array of the same rows are one batch.
  // Only a batch with an Idempotency-Key is hashed; without one the text is kept as received.
  const text = hashed ? JSON.stringify(value) : undefined;
  const checked = checkAgainst(linkCreationSchema, value);
  if (!checked.ok) return { error: plain(checked.error), text };
  const input = checked.value as Record<string, unknown>;
  const target = typeof input.url === 'string' ? parseTarget(input.url, 'url', lists.shortDomains, lists.shorteners) : undefined;
  return { input, target, text };
}
