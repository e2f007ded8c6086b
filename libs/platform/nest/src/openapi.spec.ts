import { z } from 'zod';
import { RouteContract } from './contract';
import { buildDocument } from './openapi';
import { WWW_AUTHENTICATE } from './problem-details.filter';

const OPTIONS = { title: 'test API', version: '1', description: 'd', tags: { things: 'The things' } };
const thing = z.object({ id: z.string(), size: z.number().int() }).meta({ id: 'Thing' });
const nameField = z.string().max(20);

function route(method: 'get' | 'post', path: string, contract: Partial<RouteContract> & Pick<RouteContract, 'operationId'>) {
  return { method, path, contract: { summary: 's', tags: ['things'], responses: { 200: { description: 'ok', schema: thing } }, ...contract } as RouteContract };
}

interface Doc {
  servers: Array<{ url: string }>;
  tags: Array<{ name: string; description?: string }>;
  components: { schemas: Record<string, unknown> };
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, { headers?: Record<string, { description: string }> }> }>>;
}

describe('buildDocument', () => {
  const doc = buildDocument(OPTIONS, [
    route('get', '/things/{id}', { operationId: 'getThing', scope: 'links:read', params: z.object({ id: z.string() }), errors: [404] }),
    route('post', '/things', {
      operationId: 'createThing',
      scope: 'links:write',
      // The same unnamed field twice: written in place, not made a `__schema0` component.
      body: z.object({ name: nameField, alias: nameField }),
      responses: { 201: { description: 'created', schema: thing, headers: { Location: 'The new thing' } } },
    }),
    route('get', '/public/things', { operationId: 'listPublicThings', secured: false }),
  ]) as Doc;

  it('names each operation by its contract', () => {
    expect(doc.paths['/things/{id}'].get.operationId).toBe('getThing');
    expect(doc.paths['/things'].post.operationId).toBe('createThing');
  });

  it('keeps only named schemas as components', () => {
    expect(Object.keys(doc.components.schemas).filter((name) => !name.endsWith('Problem'))).toEqual(['Thing']);
    expect(Object.keys(doc.components.schemas).some((name) => name.startsWith('__'))).toBe(false);
  });

  it('documents the challenge of a 401, Retry-After of 429 and 503, and the 431 of any route', () => {
    const responses = doc.paths['/things/{id}'].get.responses;
    expect(responses['401'].headers?.['WWW-Authenticate'].description).toContain(WWW_AUTHENTICATE);
    expect(Object.keys(responses['429'].headers ?? {})).toContain('Retry-After');
    expect(Object.keys(responses['503'].headers ?? {})).toContain('Retry-After');
    expect(responses['431']).toBeDefined();
    expect(responses['414']).toBeDefined();
    expect(Object.keys(doc.paths['/things'].post.responses['201'].headers ?? {})).toContain('Location');
  });

  it('documents on every operation, secured or not, the 503 codes of admission control', () => {
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>))
      for (const [method, operation] of Object.entries(methods)) expect([path, method, operation.responses['503']]).toEqual([path, method, expect.anything()]);
    const unavailable = doc.components.schemas.ServiceUnavailableProblem as { properties: { code: { enum: string[] } } };
    expect(unavailable.properties.code.enum).toEqual(expect.arrayContaining(['OVERLOADED', 'DEADLINE_EXCEEDED', 'DEPENDENCY_UNAVAILABLE']));
  });

  it('names a problem schema per status whose code is one of the codes that status carries', () => {
    const ref = (status: string) =>
      (doc.paths['/things/{id}'].get.responses[status] as { content: Record<string, { schema: { $ref: string } }> }).content['application/problem+json'].schema
        .$ref;
    expect(ref('404')).toBe('#/components/schemas/NotFoundProblem');
    expect(ref('401')).toBe('#/components/schemas/UnauthorizedProblem');
    const notFound = doc.components.schemas.NotFoundProblem as { properties: { status: { const: number }; code: { enum: string[] } } };
    expect(notFound.properties.status.const).toBe(404);
    expect(notFound.properties.code.enum).toEqual(expect.arrayContaining(['LINK_NOT_FOUND', 'ROUTE_NOT_FOUND']));
    expect(notFound.properties.code.enum).not.toContain('UNAUTHENTICATED');
  });

  it('lists a server and every tag with its description', () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(doc.tags).toEqual([{ name: 'things', description: 'The things' }]);
  });

  it('refuses two routes with one operationId', () => {
    expect(() => buildDocument(OPTIONS, [route('get', '/a', { operationId: 'getThing' }), route('get', '/b', { operationId: 'getThing' })])).toThrow(
      'operationId used by more than one route: getThing',
    );
  });
});
