import { yourlsOpenApi } from './yourls.openapi';

describe('the Yourls API’s OpenAPI document', () => {
  const doc = yourlsOpenApi() as {
    openapi: string;
    paths: Record<string, Record<string, { operationId?: string; responses: Record<string, unknown> }>>;
    components: { schemas: Record<string, unknown> };
  };

  it('names every operation once and every schema by a name a person would write', () => {
    const operations = Object.values(doc.paths).flatMap((item) => Object.values(item));
    const ids = operations.map((o) => o.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(Object.keys(doc.components.schemas).every((name) => /^Yourls[A-Z][A-Za-z]+$/.test(name))).toBe(true);
    expect(JSON.stringify(doc)).not.toMatch(/__schema|Schema\d/);
  });

  it('documents the errors of every operation in the Yourls error shape', () => {
    for (const operation of Object.values(doc.paths).flatMap((item) => Object.values(item))) {
      for (const status of ['400', '403', '429']) expect(JSON.stringify(operation.responses[status])).toContain('#/components/schemas/YourlsError');
    }
  });
});
