import { DomainError, ErrorCode } from '@shortlink/core';
import { problemFor } from '@shortlink/nest-platform';

/**
 * Shlink's error types (`type` of its problem details), by the names of the official SDK's
 * `ErrorType` (docs/compat.md-style table in the README, "Shlink REST v3").
 */
export const SHLINK_ERROR_TYPES = {
  INVALID_ARGUMENT: 'https://shlink.io/api/error/invalid-data',
  INVALID_SHORT_URL_DELETION: 'https://shlink.io/api/error/invalid-short-url-deletion',
  DOMAIN_NOT_FOUND: 'https://shlink.io/api/error/domain-not-found',
  FORBIDDEN_OPERATION: 'https://shlink.io/api/error/forbidden-tag-operation',
  INVALID_SLUG: 'https://shlink.io/api/error/non-unique-slug',
  INVALID_SHORTCODE: 'https://shlink.io/api/error/short-url-not-found',
  TAG_CONFLICT: 'https://shlink.io/api/error/tag-conflict',
  TAG_NOT_FOUND: 'https://shlink.io/api/error/tag-not-found',
  INVALID_AUTHORIZATION: 'https://shlink.io/api/error/missing-authentication',
  INVALID_API_KEY: 'https://shlink.io/api/error/invalid-api-key',
  NOT_FOUND: 'https://shlink.io/api/error/not-found',
  /** Ours: an SDK method without a feature of ours behind it. */
  NOT_IMPLEMENTED: 'https://shortlink.dev/problems/shlink-not-implemented',
} as const;
export type ShlinkErrorName = keyof typeof SHLINK_ERROR_TYPES;

/** Shlink's problem details: `type`, `title`, `detail`, `status`, and the extra fields of the error. */
export interface ShlinkProblem {
  type: string;
  title: string;
  detail: string;
  status: number;
  [extra: string]: unknown;
}

/** An error of the Shlink API itself (its own validation, tags, 501s), already in Shlink's words. */
export class ShlinkError extends Error {
  constructor(
    readonly kind: ShlinkErrorName,
    readonly status: number,
    readonly title: string,
    detail: string,
    readonly extra: Readonly<Record<string, unknown>> = {},
  ) {
    super(detail);
    this.name = 'ShlinkError';
  }
}

export const invalidArgument = (invalidElements: readonly string[], detail = 'Provided data is not valid') =>
  new ShlinkError('INVALID_ARGUMENT', 400, 'Invalid data', detail, { invalidElements: [...invalidElements] });

export const notImplemented = (method: string, why: string) =>
  new ShlinkError('NOT_IMPLEMENTED', 501, 'Not implemented', `${method}: ${why}`, { sdkMethod: method });

export const tagNotFound = (tag: string) => new ShlinkError('TAG_NOT_FOUND', 404, 'Tag not found', `Tag with name "${tag}" could not be found`, { tag });

const onDomain = (domain: unknown) => (typeof domain === 'string' && domain ? ` for domain "${domain}"` : '');

/** Fields of ours named as Shlink names them (invalidElements). */
const SHLINK_FIELDS: Readonly<Record<string, string>> = {
  url: 'longUrl',
  alias: 'customSlug',
  expiresAt: 'validUntil',
  maxClicks: 'maxVisits',
  deviceTargets: 'deviceLongUrls',
};

/**
 * The Shlink problem of any error a Shlink route throws: our domain errors mapped onto Shlink's
 * types where Shlink has one (slug taken, short URL or domain not found, invalid data, missing or
 * invalid key), our own problem (its type, title, status and detail, with its `code`) otherwise:
 * scope, plan limits and outages read the same as on our API. `hadKey`: the request carried an
 * X-Api-Key (a 401 is then an invalid key, else a missing one).
 */
export function shlinkProblemOf(error: unknown, url: string | undefined, hadKey: boolean): ShlinkProblem {
  if (error instanceof ShlinkError)
    return { ...error.extra, type: SHLINK_ERROR_TYPES[error.kind], title: error.title, detail: error.message, status: error.status };
  if (error instanceof DomainError) {
    const d = error.details as Record<string, unknown>;
    switch (error.code) {
      case ErrorCode.UNAUTHENTICATED:
        return hadKey
          ? { type: SHLINK_ERROR_TYPES.INVALID_API_KEY, title: 'Invalid API key', detail: 'Provided API key does not exist or is invalid.', status: 401 }
          : {
              type: SHLINK_ERROR_TYPES.INVALID_AUTHORIZATION,
              title: 'Invalid authorization',
              detail: 'Expected one of the following authentication headers, ["X-Api-Key"], but none were provided',
              status: 401,
              expectedTypes: ['X-Api-Key'],
            };
      case ErrorCode.ALIAS_TAKEN:
      case ErrorCode.ALIAS_RETIRED: {
        const slug = String(d.alias ?? d.shortCode ?? '');
        return {
          type: SHLINK_ERROR_TYPES.INVALID_SLUG,
          title: 'Invalid custom slug',
          detail: `Provided slug "${slug}" is already in use${onDomain(d.domain)}.`,
          status: 400,
          customSlug: slug,
          ...(typeof d.domain === 'string' ? { domain: d.domain } : {}),
        };
      }
      case ErrorCode.LINK_NOT_FOUND:
      case ErrorCode.LINK_DISABLED:
        return {
          type: SHLINK_ERROR_TYPES.INVALID_SHORTCODE,
          title: 'Short URL not found',
          detail: `No URL found with short code "${String(d.shortCode ?? '')}"${onDomain(d.domain)}`,
          status: 404,
          shortCode: d.shortCode,
          ...(typeof d.domain === 'string' ? { domain: d.domain } : {}),
        };
      case ErrorCode.DOMAIN_NOT_FOUND:
        return {
          type: SHLINK_ERROR_TYPES.DOMAIN_NOT_FOUND,
          title: 'Domain not found',
          detail: `Domain with authority "${String(d.domain ?? '')}" could not be found`,
          status: 404,
          authority: d.domain,
        };
      case ErrorCode.VALIDATION_FAILED:
      case ErrorCode.INVALID_URL:
      case ErrorCode.URL_NOT_ALLOWED:
      case ErrorCode.INVALID_ALIAS:
      case ErrorCode.ALIAS_RESERVED:
      case ErrorCode.DOMAIN_BLOCKED:
      case ErrorCode.INVALID_TIME_RANGE:
      case ErrorCode.INVALID_CURSOR: {
        const field =
          typeof d.field === 'string'
            ? d.field
            : error.code === ErrorCode.INVALID_URL || error.code === ErrorCode.URL_NOT_ALLOWED || error.code === ErrorCode.DOMAIN_BLOCKED
              ? 'url'
              : error.code === ErrorCode.INVALID_ALIAS || error.code === ErrorCode.ALIAS_RESERVED
                ? 'alias'
                : undefined;
        const elements = field ? [SHLINK_FIELDS[field.split('.')[0]] ?? field] : [];
        return {
          type: SHLINK_ERROR_TYPES.INVALID_ARGUMENT,
          title: 'Invalid data',
          detail: error.message,
          status: 400,
          invalidElements: elements,
          code: error.code,
        };
      }
      default:
        break;
    }
  }
  const ours = problemFor(error, url);
  if (ours.code === 'ROUTE_NOT_FOUND')
    return { type: SHLINK_ERROR_TYPES.NOT_FOUND, title: 'Not found', detail: 'Requested route does not exist.', status: 404 };
  if (ours.code === 'INVALID_JSON' || ours.code === 'JSON_TOO_DEEP' || ours.code === 'BAD_REQUEST')
    return { type: SHLINK_ERROR_TYPES.INVALID_ARGUMENT, title: 'Invalid data', detail: ours.detail, status: 400, invalidElements: [], code: ours.code };
  const { instance: _instance, ...rest } = ours;
  return rest;
}
