import { Webhook as StandardWebhook } from 'standardwebhooks';

/**
 * The Standard Webhooks headers of one attempt: `webhook-id` (the delivery's, the same on every
 * attempt), `webhook-timestamp` (this attempt's, seconds) and `webhook-signature`, one `v1,…`
 * HMAC-SHA256 per secret given, space-separated (the current one, and during a rotation the old one).
 */
export function signedHeaders(id: string, at: Date, body: string, secrets: readonly string[]): Record<string, string> {
  const signatures = secrets.map((secret) => new StandardWebhook(secret).sign(id, at, body));
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
