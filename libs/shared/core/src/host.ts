/** A port a client may add to the Host of a request on the scheme's default port (RFC 9110 §7.2: the same origin). */
const DEFAULT_PORTS = new Set(['80', '443']);

/**
 * The host a request was addressed to, in the one form our domain tables use: lower case, without
 * the one trailing dot of a fully qualified name (`go.acme.test.`), without a default port (`:80`,
 * `:443`; the scheme is not known behind a proxy that ends TLS, and neither port names another
 * site). A non-default port is kept (`localhost:8080` is its own domain). Any other text comes back
 * lower-cased only, so it matches no domain of ours (docs/design.md, "Tenants, keys and plans").
 */
export function normalizeHost(host: string): string {
  const lower = host.toLowerCase();
  // `[v6]:port` keeps its brackets; only a port after the last `:` outside brackets is one.
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d{1,5}))?$/.exec(lower);
  if (!m) return lower;
  const name = m[1].endsWith('.') && !m[1].endsWith('..') ? m[1].slice(0, -1) : m[1];
  const port = m[2];
  return port === undefined || DEFAULT_PORTS.has(port) ? name : `${name}:${port}`;
}
