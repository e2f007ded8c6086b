import type { FastifyRequest } from 'fastify';
import { BrowserOrigins } from './browser-origin';

const request = (headers: Record<string, string>) => ({ headers: { host: 'api.example.com:8081', ...headers } }) as unknown as FastifyRequest;
const codeOf = (check: () => void) => {
  try {
    check();
    return 'passed';
  } catch (error) {
    return (error as { code?: string }).code;
  }
};

describe('BrowserOrigins', () => {
  const origins = new BrowserOrigins(['https://console.example.com', '*', 'https://tools.example.org']);
  const verdict = (headers: Record<string, string>) => codeOf(() => origins.check(request(headers)));

  it('lets programs through (no Origin, no fetch metadata) and pages of this host, of the console and of CORS_ORIGINS', () => {
    expect(verdict({})).toBe('passed');
    expect(verdict({ 'sec-fetch-mode': 'cors' })).toBe('passed'); // what Node's fetch sends
    expect(verdict({ origin: 'http://api.example.com:8081', 'sec-fetch-site': 'same-origin' })).toBe('passed');
    expect(verdict({ origin: 'https://API.example.com:8081' })).toBe('passed'); // behind a TLS front: the same host
    expect(verdict({ origin: 'https://console.example.com', 'sec-fetch-site': 'same-site' })).toBe('passed');
    expect(verdict({ origin: 'https://tools.example.org', 'sec-fetch-site': 'cross-site' })).toBe('passed');
    expect(verdict({ 'sec-fetch-site': 'same-origin' })).toBe('passed');
    expect(verdict({ 'sec-fetch-site': 'none' })).toBe('passed'); // typed into the address bar
  });

  it("refuses another site's page, a page without an origin, and fetch metadata that says cross-site; `*` trusts no page", () => {
    expect(verdict({ origin: 'http://evil.example.net', 'sec-fetch-site': 'cross-site' })).toBe('CROSS_SITE_REQUEST');
    expect(verdict({ origin: 'http://evil.example.net' })).toBe('CROSS_SITE_REQUEST');
    expect(verdict({ origin: 'http://api.example.com:9999' })).toBe('CROSS_SITE_REQUEST'); // another port is another origin
    expect(verdict({ origin: 'http://api.example.com.evil.net:8081' })).toBe('CROSS_SITE_REQUEST');
    expect(verdict({ origin: 'null' })).toBe('CROSS_SITE_REQUEST');
    expect(verdict({ origin: 'not a url' })).toBe('CROSS_SITE_REQUEST');
    expect(verdict({ 'sec-fetch-site': 'cross-site' })).toBe('CROSS_SITE_REQUEST');
    expect(verdict({ 'sec-fetch-site': 'same-site' })).toBe('CROSS_SITE_REQUEST');
    expect(codeOf(() => new BrowserOrigins(['*']).check(request({ origin: 'https://anyone.example' })))).toBe('CROSS_SITE_REQUEST');
  });
});
