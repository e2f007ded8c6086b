import type { RemoteReputation } from '@shortlink/safety-domain';
import type { ReputationVerdict } from '@shortlink/url-policy';
import { OutboundSend } from './outbound';

export interface WebRiskOptions {
  /** `https://webrisk.googleapis.com/v1/uris:search`, or a server that speaks it. */
  readonly endpoint: string;
  readonly apiKey: string;
  /** The threat lists searched (`MALWARE`, `SOCIAL_ENGINEERING`, `UNWANTED_SOFTWARE`, `SOCIAL_ENGINEERING_EXTENDED_COVERAGE`). */
  readonly threatTypes: readonly string[];
}

/** Threats that ban a link; any other list flags it. */
const BANNING = new Set(['MALWARE', 'SOCIAL_ENGINEERING']);

/** `uris.search`'s answer: empty when the URI is on no list searched. */
interface SearchUrisResponse {
  readonly threat?: { readonly threatTypes?: readonly string[]; readonly expireTime?: string };
}

/**
 * Google Web Risk, the commercial successor of Safe Browsing, through its documented `uris.search`
 * (docs/design.md, "Trust and safety"): `GET {endpoint}?threatTypes=…&threatTypes=…&uri=…&key=…`,
 * answered `{}` or `{"threat": {"threatTypes": [...], "expireTime": "…"}}` (the verdict holds until
 * then); an error is `{"error": {"code", "message", "status"}}` with its HTTP status. The key goes
 * in the query as the API takes it, and is never in an error message.
 */
export class WebRiskClient implements RemoteReputation {
  readonly source = 'web-risk';

  constructor(
    private readonly send: OutboundSend,
    private readonly options: WebRiskOptions,
  ) {}

  async lookup(url: string): Promise<{ verdict: ReputationVerdict | null; expiresAt: number | null }> {
    const request = new URL(this.options.endpoint);
    for (const type of this.options.threatTypes) request.searchParams.append('threatTypes', type);
    request.searchParams.set('uri', url);
    request.searchParams.set('key', this.options.apiKey);
    const answer = await this.send(request.toString(), { method: 'GET', headers: { accept: 'application/json' } });
    const text = answer.body.toString('utf8');
    if (answer.status !== 200) {
      let why = '';
      try {
        const error = (JSON.parse(text) as { error?: { status?: string; message?: string } }).error;
        why = [error?.status, error?.message].filter(Boolean).join(': ');
      } catch {
        why = 'no error document';
      }
      throw new Error(`Web Risk answered ${answer.status}${why ? ` (${why.replaceAll(this.options.apiKey, '…')})` : ''}`);
    }
    let parsed: SearchUrisResponse;
    try {
      parsed = JSON.parse(text) as SearchUrisResponse;
    } catch {
      throw new Error('Web Risk answered something that is not JSON');
    }
    const types = parsed.threat?.threatTypes ?? [];
    if (types.length === 0) return { verdict: null, expiresAt: null };
    const expires = parsed.threat?.expireTime ? Date.parse(parsed.threat.expireTime) : NaN;
    const state = types.some((t) => BANNING.has(t)) ? 'banned' : 'flagged';
    return {
      verdict: { state, source: this.source, reason: `Web Risk ${types.join(', ')}: ${url.length > 200 ? `${url.slice(0, 200)}…` : url}` },
      expiresAt: Number.isNaN(expires) ? null : expires,
    };
  }
}
