import { ProbeAnswer, ProbeFailure, TargetHttp } from './ports';

/** What one check of a target found. */
export type ProbeOutcome =
  /** It answers: a final status below 400, or one that says the page exists behind a door (401, 403). */
  | { readonly kind: 'ok'; readonly status: number; readonly requests: number }
  /** It does not: a 404, a 410, a 5xx, no answer, a redirect loop. */
  | { readonly kind: 'broken'; readonly status: number | null; readonly error: string | null; readonly requests: number }
  /** The host asked us to come back later (429, or 503 with Retry-After): no verdict, the check waits. */
  | { readonly kind: 'wait'; readonly status: number; readonly retryAfterMs: number | null; readonly requests: number };

export interface ProbeOptions {
  /** Redirects followed at most (each hop through the guard); beyond: `too-many-redirects`. */
  readonly maxRedirects: number;
  readonly now?: () => number;
}

/** HEAD answers that mean "not like this", not "not there": the check asks again with GET. */
const HEAD_REFUSED = new Set([400, 403, 405, 406, 501]);
/** Statuses that say the page is there (a login wall is not a dead link). */
const THERE_BEHIND_A_DOOR = new Set([401, 403]);

/**
 * One check of a target (docs/design.md, "Trust and safety", dead links): HEAD, then GET when the
 * HEAD is refused; redirects followed up to `maxRedirects`, each hop a request of its own through
 * the pinned client (a hop to a private address is refused there); a loop is broken at once.
 */
export async function probeTarget(http: TargetHttp, url: string, options: ProbeOptions): Promise<ProbeOutcome> {
  const seen = new Set<string>();
  let requests = 0;
  let current = url;
  for (let hop = 0; ; hop++) {
    seen.add(current);
    let answer: ProbeAnswer;
    try {
      requests++;
      answer = await http.request(current, 'HEAD');
      if (HEAD_REFUSED.has(answer.status)) {
        requests++;
        answer = await http.request(current, 'GET');
      }
    } catch (error) {
      const reason = error instanceof ProbeFailure ? error.reason : 'connection-failed';
      return { kind: 'broken', status: null, error: reason, requests };
    }
    const { status } = answer;
    if (status >= 300 && status < 400 && status !== 304) {
      if (answer.location === null) return { kind: 'broken', status, error: 'redirect-without-location', requests };
      let next: string;
      try {
        next = new URL(answer.location, current).toString();
      } catch {
        return { kind: 'broken', status, error: 'invalid-redirect', requests };
      }
      if (!/^https?:$/.test(new URL(next).protocol)) return { kind: 'ok', status, requests }; // an app or mail link: not ours to follow
      if (seen.has(next)) return { kind: 'broken', status, error: 'redirect-loop', requests };
      if (hop >= options.maxRedirects) return { kind: 'broken', status, error: 'too-many-redirects', requests };
      current = next;
      continue;
    }
    if (status === 429 || (status === 503 && answer.retryAfter !== null)) {
      return { kind: 'wait', status, retryAfterMs: retryAfterMs(answer.retryAfter, options.now?.() ?? Date.now()), requests };
    }
    if (status < 400 || THERE_BEHIND_A_DOOR.has(status)) return { kind: 'ok', status, requests };
    return { kind: 'broken', status, error: null, requests };
  }
}

/** `Retry-After` as milliseconds from now: seconds, or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
