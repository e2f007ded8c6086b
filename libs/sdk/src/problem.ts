import type { components } from './generation-api';

type Schemas = components['schemas'];
/** The document's problem schemas by status (BadRequestProblem, NotFoundProblem, …), each listing its codes. */
type ProblemSchema = Exclude<Extract<keyof Schemas, `${string}Problem`>, 'Problem'>;

/** Every stable error code the API's document names (libs/shared/core/src/domain-error.ts on the server). */
export type ProblemCode = { [K in ProblemSchema]: Schemas[K] extends { code: infer C } ? C : never }[ProblemSchema];

/**
 * Codes of the client itself: NETWORK_ERROR when no answer came (refused, reset, DNS, aborted);
 * UNEXPECTED_RESPONSE when an answer was not problem+json (a proxy's HTML page, an empty body).
 */
export type ClientErrorCode = 'NETWORK_ERROR' | 'UNEXPECTED_RESPONSE';

/** One issue of VALIDATION_FAILED: where (body, query, path, header) and which field. */
export interface ProblemIssue {
  readonly in: string;
  readonly path: string;
  readonly message: string;
}

/** An application/problem+json answer (RFC 9457) with the stable `code`; VALIDATION_FAILED lists each field in `errors`. */
export interface Problem {
  readonly type?: string;
  readonly title?: string;
  /** The HTTP status; 0 when no answer came. */
  readonly status: number;
  /** A code of the document, a client code, or (from a newer server) one this SDK does not know yet. */
  readonly code: ProblemCode | ClientErrorCode | (string & {});
  readonly detail: string;
  readonly instance?: string;
  readonly errors?: readonly ProblemIssue[];
  readonly [extra: string]: unknown;
}

/** An API call that did not succeed: the problem the API answered (or NETWORK_ERROR / UNEXPECTED_RESPONSE), as an Error. */
export class ShortlinkApiError extends Error {
  override readonly name = 'ShortlinkApiError';
  readonly status: number;
  readonly code: Problem['code'];
  readonly detail: string;
  /** VALIDATION_FAILED's issues, one per field; empty otherwise. */
  readonly errors: readonly ProblemIssue[];
  /** Seconds the API asked to wait before trying again (Retry-After of a 429 or 503), or null. */
  readonly retryAfterSeconds: number | null;

  constructor(
    readonly problem: Problem,
    options: { retryAfterSeconds?: number | null; cause?: unknown } = {},
  ) {
    super(
      `${problem.code}${problem.status ? ` (${problem.status})` : ''}: ${problem.detail}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.status = problem.status;
    this.code = problem.code;
    this.detail = problem.detail;
    this.errors = problem.errors ?? [];
    this.retryAfterSeconds = options.retryAfterSeconds ?? null;
  }
}

/** Whether `error` is a ShortlinkApiError, with one of `codes` when given (narrows `code`). */
export function isShortlinkApiError<C extends Problem['code']>(error: unknown, ...codes: C[]): error is ShortlinkApiError & { readonly code: C } {
  return error instanceof ShortlinkApiError && (codes.length === 0 || (codes as readonly string[]).includes(error.code));
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The problem of a failed call, never undefined: the problem+json body openapi-fetch parsed
 * (`error`), NETWORK_ERROR for a thrown Error (no answer), or UNEXPECTED_RESPONSE with the status
 * and the start of a body that is not a problem.
 */
export function problemOf(error: unknown, response?: Response): Problem {
  if (isRecord(error) && typeof error.code === 'string' && typeof error.detail === 'string') {
    return { ...(error as Problem), status: typeof error.status === 'number' ? error.status : (response?.status ?? 0) };
  }
  if (error instanceof Error) return { status: 0, code: 'NETWORK_ERROR', detail: `The API did not answer: ${error.message}` };
  const status = response?.status ?? 0;
  const text = typeof error === 'string' ? error.trim().slice(0, 200) : '';
  return { status, code: 'UNEXPECTED_RESPONSE', detail: `The API answered ${status || 'nothing'}${text ? `: ${text}` : ' without a problem'}` };
}

/** Retry-After in seconds (a number of seconds or an HTTP date), or null. */
export function retryAfterSeconds(response: Response | undefined, now = Date.now()): number | null {
  const value = response?.headers.get('retry-after');
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/** What openapi-fetch answers for a call: the data on success, else the error, with the response either way. */
export interface FetchResult {
  readonly data?: unknown;
  readonly error?: unknown;
  readonly response: Response;
}

/** The data of a successful answer (undefined for 204). */
export type DataOf<R> = R extends { data: infer D; error?: never } ? ([D] extends [never] ? undefined : D) : never;

/**
 * Awaits an openapi-fetch call and answers its data, or throws ShortlinkApiError carrying the
 * problem's code (NETWORK_ERROR when no answer came):
 *
 *     const link = await unwrap(client.POST('/api/v1/links', { body: { url } }));
 */
export async function unwrap<R extends FetchResult>(call: Promise<R>): Promise<DataOf<R>> {
  let result: R;
  try {
    result = await call;
  } catch (cause) {
    throw new ShortlinkApiError(problemOf(cause instanceof Error ? cause : new Error(String(cause))), { cause });
  }
  if (result.response.ok) return result.data as DataOf<R>;
  throw new ShortlinkApiError(problemOf(result.error, result.response), { retryAfterSeconds: retryAfterSeconds(result.response) });
}
