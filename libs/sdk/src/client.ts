import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './generation-api';
import { retryAfterSeconds } from './problem';

/**
 * The generation API, typed by its OpenAPI document: `client.GET('/api/v1/links/{code}', …)`,
 * `client.POST('/api/v1/links', { body })`, … (openapi-fetch). A path, parameter or field the API
 * does not have fails the type check. Calls answer `{ data, error, response }`; `unwrap()` turns
 * that into the data or a thrown ShortlinkApiError.
 */
export type ShortlinkClient = Client<paths>;

/** A fetch as openapi-fetch calls it (one Request). */
export type FetchLike = (request: Request) => Promise<Response>;

export interface ShortlinkClientOptions {
  /** The generation API's address, e.g. `https://api.sho.rt` or `http://127.0.0.1:8081`; '' in a page it serves (same origin). */
  readonly baseUrl: string;
  /** An API key (`sl_…`), sent as `x-api-key`. Without one, a browser's session cookie authenticates (see `credentials`). */
  readonly apiKey?: string;
  /** The fetch to call (default: the global fetch, looked up at each call). */
  readonly fetch?: FetchLike;
  /** Headers sent with every call. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Cookies (a browser's session): 'same-origin' for a page the API serves. */
  readonly credentials?: 'omit' | 'same-origin' | 'include';
  /**
   * Times a call is sent again when the API asks to wait: a 429 (plan or rate limit; nothing was
   * done), or a 503 of a GET; after the Retry-After it answers (at most `maxRetryWaitSeconds`
   * each). Default 0: the caller sees the 429 as a ShortlinkApiError with `retryAfterSeconds`.
   */
  readonly retries?: number;
  readonly maxRetryWaitSeconds?: number;
}

/** Sends a call again after the Retry-After of a 429 (or of a GET's 503), `retries` times at most. */
export function retryingFetch(
  base: FetchLike,
  retries: number,
  maxWaitSeconds = 60,
  sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms)),
): FetchLike {
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= retries;
      const response = await base(last ? request : request.clone());
      const retryable = response.status === 429 || (response.status === 503 && (request.method === 'GET' || request.method === 'HEAD'));
      if (last || !retryable) return response;
      await response.body?.cancel();
      await sleep(Math.min(maxWaitSeconds, retryAfterSeconds(response) ?? 1) * 1000);
    }
  };
}

/**
 * A client of the generation API:
 *
 *     const client = createShortlinkClient({ baseUrl: 'https://api.sho.rt', apiKey: process.env.SHORTLINK_API_KEY });
 *     const link = await unwrap(client.POST('/api/v1/links', { body: { url: 'https://example.com/' } }));
 */
export function createShortlinkClient(options: ShortlinkClientOptions): ShortlinkClient {
  const base: FetchLike = options.fetch ?? ((request) => globalThis.fetch(request));
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { ...options.headers, ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}) },
    fetch: options.retries ? retryingFetch(base, options.retries, options.maxRetryWaitSeconds) : base,
    ...(options.credentials ? { credentials: options.credentials } : {}),
  });
}
