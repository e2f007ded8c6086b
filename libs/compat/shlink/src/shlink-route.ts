import { SetMetadata } from '@nestjs/common';
import type { z } from 'zod';
import type { Scope } from '@shortlink/tenants-domain';
import type { ShlinkErrorName } from './shlink-problem';

export const SHLINK_ROUTE = Symbol('SHLINK_ROUTE');

/**
 * What a Shlink route takes and answers, for its guard (scope), its validation and the Shlink
 * OpenAPI document (/docs/shlink/openapi.json). Not our `@Contract`: these routes belong to
 * Shlink's API and document of their own, and answer Shlink's problems.
 */
export interface ShlinkRouteSpec {
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  /** The key's scope; none: open (health). */
  readonly scope?: Scope;
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  /** The success answer: its status, and its body schema (none for 204). */
  readonly status: number;
  readonly response?: z.ZodType;
  readonly responseType?: string;
  /** Statuses of Shlink problems this route answers besides those of any secured route. */
  readonly errors?: readonly number[];
  /** The error types it can answer, for the description. */
  readonly errorTypes?: readonly ShlinkErrorName[];
  /** An SDK method without a feature of ours: always 501 after the key check. */
  readonly notImplemented?: boolean;
}

export const ShlinkRoute = (spec: ShlinkRouteSpec) => SetMetadata(SHLINK_ROUTE, spec);
