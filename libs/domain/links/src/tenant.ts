import { createHash, randomBytes } from 'crypto';

export type Plan = 'free' | 'paid';

export interface Tenant {
  readonly id: string;
  readonly name: string;
  readonly plan: Plan;
  readonly createdAt: Date;
}

/** Generation API requests per minute per key, by plan (docs/design.md, "Where the numbers come from"). */
export const PLAN_RATE_LIMITS: Readonly<Record<Plan, number>> = { free: 100, paid: 10_000 };

/**
 * API keys are 190-bit random tokens, so a fast hash is the right storage form (no brute-force
 * surface as with passwords); only the SHA-256 is stored.
 */
export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}

const KEY_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
export function generateApiKey(): string {
  const bytes = randomBytes(32);
  let key = 'sl_';
  for (const b of bytes) key += KEY_ALPHABET[b % 62];
  return key;
}
