import Fastify from 'fastify';
import { compatCors, isCompatPath } from './compat-cors';

describe('compatCors (COMPAT_CORS)', () => {
  const app = Fastify();
  compatCors(app);
  app.get('/rest/v3/tags', async (_req, reply) => reply.header('access-control-allow-credentials', 'true').send({ tags: [] }));
  app.get('/api/v1/links', async () => ({ links: [] }));
  beforeAll(() => app.ready());
  afterAll(() => app.close());

  it('knows the compatible APIs’ paths, and only those', () => {
    expect(
      ['/rest/v3', '/rest/v3/health', '/rest/v3?x=1', '/yourls-api.php?action=stats', '/v4/shorten', '/.well-known/mercure?topic=x'].every(isCompatPath),
    ).toBe(true);
    expect(['/rest/v30', '/api/v1/links', '/restv3', '/v4', '/yourls-api.phpx', '/abc'].some(isCompatPath)).toBe(false);
  });

  it('answers a preflight of a compatible API from any origin, without credentials, before any route', async () => {
    const res = await app.inject({
      method: 'OPTIONS',
      url: '/rest/v3/short-urls',
      headers: { origin: 'https://ui.example.org', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key,content-type' },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-methods']).toContain('PATCH');
    expect(res.headers['access-control-allow-headers']).toContain('x-api-key');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('lets any origin read a compatible API’s answer, never with credentials; other routes are left alone', async () => {
    const shlink = await app.inject({ method: 'GET', url: '/rest/v3/tags', headers: { origin: 'https://ui.example.org' } });
    expect(shlink.headers['access-control-allow-origin']).toBe('*');
    expect(shlink.headers['access-control-allow-credentials']).toBeUndefined();
    expect(shlink.headers['access-control-expose-headers']).toContain('ratelimit-remaining');
    const ours = await app.inject({ method: 'GET', url: '/api/v1/links', headers: { origin: 'https://ui.example.org' } });
    expect(ours.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await app.inject({
      method: 'OPTIONS',
      url: '/api/v1/links',
      headers: { origin: 'https://x.example', 'access-control-request-method': 'GET' },
    });
    expect(preflight.statusCode).toBe(404);
  });
});
