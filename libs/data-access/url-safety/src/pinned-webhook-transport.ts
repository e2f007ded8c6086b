import type { SendResult, WebhookTransport, WebhookUrlGuard } from '@shortlink/webhooks-domain';
import { PinnedHttpClient } from './pinned-http-client';

/** The most of a receiver's answer read (and dropped): its status is what counts. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * POSTs webhook deliveries over a PinnedHttpClient: to an address the guard resolved and checked
 * for this very attempt (docs/design.md, "Webhooks"), so a host whose DNS changes between the check
 * and the connection (rebinding) cannot reach a private one.
 */
export class PinnedWebhookTransport implements WebhookTransport {
  private readonly http: PinnedHttpClient;

  constructor(guard: WebhookUrlGuard, timeoutMs: number) {
    this.http = new PinnedHttpClient(guard, { timeoutMs, maxAnswerBytes: MAX_ANSWER_BYTES, userAgent: 'shortlink-webhooks/1' });
  }

  async post(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<SendResult> {
    try {
      const answer = await this.http.send(url, { method: 'POST', headers, body });
      return { statusCode: answer.status, error: null };
    } catch (error) {
      return { statusCode: null, error: error instanceof Error ? error.message : String(error) };
    }
  }
}
