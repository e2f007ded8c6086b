import { ConfigError } from './config';
import { environmentSchema } from './variables';

/** The generation API a client talks to when SHORTLINK_API_URL is not set: `npm start`'s. */
export const DEFAULT_API_URL = 'http://127.0.0.1:8081';

/** The settings of a client of the API (the `shortlink` CLI, links:import, links:export). */
export interface ClientConfig {
  /** SHORTLINK_API_URL, without a trailing slash. */
  readonly apiUrl: string;
  /** SHORTLINK_API_KEY, or null when not set. */
  readonly apiKey: string | null;
}

/**
 * The client settings of the environment, validated by the one schema (envSchema) but only these
 * two: a client on a laptop or in a CI job carries no server settings, and a server setting it
 * happens to have (valid for its own process or not) is none of its business.
 */
export function loadClientConfig(source: Record<string, string | undefined>): ClientConfig {
  const env = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = environmentSchema(['SHORTLINK_API_URL', 'SHORTLINK_API_KEY']).safeParse(env);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`));
  return { apiUrl: (parsed.data.SHORTLINK_API_URL ?? DEFAULT_API_URL).replace(/\/+$/, ''), apiKey: parsed.data.SHORTLINK_API_KEY ?? null };
}
