/** Links created through the generation API, as the bench and the test tiers need them. */
import { sleep } from './poll';
import { pooled } from './http';

/** A link created through the generation API. */
export interface CreatedLink {
  code: string;
  domain: string;
  url: string;
  key: string; // short:link:<domain>:<code>, its Redis cache key
}

export interface CreateLinksOptions {
  /** Base URL of the generation app's public listener. */
  generation: string;
  apiKey: string;
  count: number;
  /** The target URL of link `i`. */
  url: (i: number) => string;
  /** Requests in flight at most (default 8). */
  concurrency?: number;
  /** Further attempts of a POST that did not answer 201, after a growing pause (default 0: the first failure throws). */
  retries?: number;
}

/** `POST /api/v1/links` for each of `count` URLs, at most `concurrency` at a time; every answer must be 201. */
export async function createLinks(o: CreateLinksOptions): Promise<CreatedLink[]> {
  const retries = o.retries ?? 0;
  const one = async (i: number): Promise<CreatedLink> => {
    const url = o.url(i);
    for (let attempt = 0; ; attempt++) {
      const res = await fetch(`${o.generation}/api/v1/links`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': o.apiKey },
        body: JSON.stringify({ url }),
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await res.json()) as { code?: string; domain?: string };
      if (res.status === 201 && body.code && body.domain) return { code: body.code, domain: body.domain, url, key: `short:link:${body.domain}:${body.code}` };
      if (attempt >= retries) throw new Error(`creating a link: POST /api/v1/links answered ${res.status} ${JSON.stringify(body)}`);
      await sleep(200 * (attempt + 1));
    }
  };
  return pooled(o.count, o.concurrency ?? 8, one, 10 * 60_000);
}
