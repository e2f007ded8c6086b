import { buildShlinkDocument, shlinkRoutesOf } from './shlink-openapi';
import { ShlinkController } from './shlink.controller';

describe('Shlink OpenAPI document', () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a generated document, read by its paths
  const doc = buildShlinkDocument() as any;

  it('publishes every Shlink route with a unique operationId named after the SDK method', () => {
    const routes = shlinkRoutesOf(ShlinkController);
    expect(routes).toHaveLength(23);
    const ids = routes.map((r) => r.spec.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { method, path, spec } of routes) expect(doc.paths[path][method].operationId).toBe(spec.operationId);
    expect(doc.paths['/rest/v3/short-urls'].get.operationId).toBe('listShortUrls');
    expect(doc.paths['/rest/v3/short-urls/{shortCode}'].patch.operationId).toBe('editShortUrl');
    expect(doc.paths['/rest/v3/health'].get.security).toEqual([]);
  });

  it('names its schemas (Shlink…) and answers Shlink problems; no route is a 501 any more', () => {
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining([
        'ShlinkShortUrl',
        'ShlinkShortUrlCreation',
        'ShlinkShortUrlEdit',
        'ShlinkVisit',
        'ShlinkVisitLocation',
        'ShlinkPagination',
        'ShlinkProblem',
      ]),
    );
    expect(Object.keys(doc.components.schemas).filter((n) => /^__schema|^Schema\d/.test(n))).toEqual([]);
    const create = doc.paths['/rest/v3/short-urls'].post;
    expect(create.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/ShlinkShortUrl');
    expect(create.responses['401'].content['application/problem+json'].schema.$ref).toBe('#/components/schemas/ShlinkProblem');
    const mercure = doc.paths['/rest/v3/mercure-info'].get;
    expect(mercure.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/ShlinkMercureInfo');
    expect(doc.paths['/rest/v3/visits/orphan'].delete.responses['200'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/ShlinkDeletedVisits',
    );
    for (const path of Object.values(doc.paths) as Array<Record<string, { responses: Record<string, unknown> }>>)
      for (const op of Object.values(path)) expect(op.responses['501']).toBeUndefined();
  });
});
