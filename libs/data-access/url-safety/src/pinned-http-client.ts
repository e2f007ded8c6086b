import { IncomingHttpHeaders, request as httpRequest } from 'http';
import { request as httpsRequest } from 'https';
import { isIP } from 'net';
import type { DestinationGuard } from '@shortlink/url-policy';

export interface PinnedHttpClientOptions {
  /** No answer (headers and body) within this long: the request fails. */
  readonly timeoutMs: number;
  /** The most of an answer's body read; past it the answer is cut (`truncated`). */
  readonly maxAnswerBytes: number;
  readonly userAgent: string;
}

export interface PinnedRequest {
  readonly method: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
  readonly signal?: AbortSignal | null;
}

export interface PinnedAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** At most `maxAnswerBytes`. */
  readonly body: Buffer;
  /** The answer was longer than `maxAnswerBytes` and was cut there. */
  readonly truncated: boolean;
}

/**
 * Outbound HTTP(S) to places the platform does not own (webhook receivers, tenants' OpenID
 * providers), connecting to an address the guard resolved and checked for this very request
 * (docs/design.md, "Security model"): the socket's `lookup` answers that address, so a host whose
 * DNS changes between the check and the connection (rebinding) cannot reach another one. TLS still
 * verifies the certificate against the host name. Redirects are not followed.
 */
export class PinnedHttpClient {
  constructor(
    private readonly guard: DestinationGuard,
    private readonly options: PinnedHttpClientOptions,
  ) {}

  /** One request; rejects when the guard refuses the URL, the connection fails, or no answer comes in time. */
  async send(url: string, request: PinnedRequest): Promise<PinnedAnswer> {
    const checked = await this.guard.resolve(url);
    const address = checked.addresses[0];
    const family = isIP(address);
    const target = checked.url;
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const body = request.body ?? '';
    return new Promise<PinnedAnswer>((resolve, reject) => {
      const req = send(
        target,
        {
          method: request.method,
          headers: { ...request.headers, 'content-length': Buffer.byteLength(body), 'user-agent': this.options.userAgent },
          timeout: this.options.timeoutMs,
          signal: request.signal ?? undefined,
          lookup: (_host, lookupOptions, callback) => {
            // Node asks for every address when autoSelectFamily is on; one checked address either way.
            if ((lookupOptions as { all?: boolean }).all)
              (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
            else callback(null, address, family);
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let read = 0;
          let truncated = false;
          const done = () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).subarray(0, this.options.maxAnswerBytes), truncated });
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > this.options.maxAnswerBytes) {
              truncated = true;
              res.destroy();
            } else chunks.push(chunk);
          });
          res.on('close', done);
          res.on('error', done);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.options.timeoutMs} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  /**
   * The same as a fetch function, for a library that takes one (openid-client's customFetch): the
   * URL's host resolved and checked here, the connection made to that address, the answer read
   * whole (an answer longer than `maxAnswerBytes` is an error).
   */
  readonly fetch = async (
    input: string | URL,
    init: { method?: string; headers?: HeadersInit; body?: unknown; signal?: AbortSignal | null } = {},
  ): Promise<Response> => {
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    const body = init.body === undefined || init.body === null ? undefined : typeof init.body === 'string' ? init.body : String(init.body);
    const answer = await this.send(String(input), { method: init.method ?? 'GET', headers, body, signal: init.signal });
    if (answer.truncated) throw new Error(`the answer of ${new URL(String(input)).host} is longer than ${this.options.maxAnswerBytes} bytes`);
    const out = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (Array.isArray(value)) for (const v of value) out.append(name, v);
      else if (value !== undefined) out.set(name, value);
    }
    if (answer.status < 200 || answer.status > 599) throw new Error(`${new URL(String(input)).host} answered no HTTP status`);
    const bodiless = answer.status === 204 || answer.status === 304;
    return new Response(bodiless ? null : new Uint8Array(answer.body), { status: answer.status, headers: out });
  };
}
