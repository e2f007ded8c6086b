import { request as httpRequest } from 'http';
import { request as httpsRequest } from 'https';
import { isIP } from 'net';
import type { SendResult, WebhookTransport, WebhookUrlGuard } from '@shortlink/webhooks-domain';

/** The most of a receiver's answer read (and dropped): its status is what counts. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * POSTs webhook deliveries over node:http(s), connecting to an address the guard resolved and
 * checked for this very attempt (docs/design.md, "Webhooks"): the `lookup` of the socket answers
 * that address, so a host whose DNS changes between the check and the connection (rebinding)
 * cannot reach a private one. TLS still verifies the certificate against the host name.
 */
export class PinnedWebhookTransport implements WebhookTransport {
  constructor(
    private readonly guard: WebhookUrlGuard,
    private readonly timeoutMs: number,
  ) {}

  async post(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<SendResult> {
    let checked: { url: URL; addresses: string[] };
    try {
      checked = await this.guard.resolve(url);
    } catch (error) {
      return { statusCode: null, error: error instanceof Error ? error.message : String(error) };
    }
    const address = checked.addresses[0];
    const family = isIP(address);
    const target = checked.url;
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<SendResult>((resolve) => {
      const req = send(
        target,
        {
          method: 'POST',
          headers: { ...headers, 'content-length': Buffer.byteLength(body), 'user-agent': 'shortlink-webhooks/1' },
          timeout: this.timeoutMs,
          lookup: (_host, options, callback) => {
            // Node asks for every address when autoSelectFamily is on; one checked address either way.
            if ((options as { all?: boolean }).all)
              (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
            else callback(null, address, family);
          },
        },
        (res) => {
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_ANSWER_BYTES) res.destroy();
          });
          res.on('close', () => resolve({ statusCode: res.statusCode ?? null, error: null }));
          res.on('error', () => resolve({ statusCode: res.statusCode ?? null, error: null }));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.timeoutMs} ms`)));
      req.on('error', (error) => resolve({ statusCode: null, error: error.message }));
      req.end(body);
    });
  }
}
