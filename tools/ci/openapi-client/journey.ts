/**
 * A client generated from the published OpenAPI documents, used as a person would use it
 * (docs/design.md, "Contract"). tools/ci/api-fuzz.sh writes `generated/*.ts` with openapi-typescript,
 * type-checks this file against them (a renamed operation, schema or field fails the check) and
 * runs it against the embedded profile with openapi-fetch.
 *
 *   OPENAPI_GENERATION=http://… OPENAPI_ANALYTICS=http://… OPENAPI_KEY=sl_… node -r ./tools/register.js tools/ci/openapi-client/journey.ts
 */
import createClient from 'openapi-fetch';
import type { components as AnalyticsSchemas, paths as AnalyticsPaths } from './generated/analytics-api';
import type { components as GenerationSchemas, paths as GenerationPaths } from './generated/generation-api';

type Link = GenerationSchemas['schemas']['Link'];
type NotFound = GenerationSchemas['schemas']['NotFoundProblem'];
type LinkStats = AnalyticsSchemas['schemas']['LinkStats'];

function need(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`generated client: ${what}`);
  console.log(`ok  ${what}`);
}

async function main(): Promise<void> {
  const headers = { 'x-api-key': need('OPENAPI_KEY') };
  const generation = createClient<GenerationPaths>({ baseUrl: need('OPENAPI_GENERATION'), headers });
  const analytics = createClient<AnalyticsPaths>({ baseUrl: need('OPENAPI_ANALYTICS'), headers });

  const created = await generation.POST('/api/v1/links', {
    body: { url: 'https://example.com/generated-client', title: 'from a generated client', tags: ['openapi'] },
  });
  const link: Link | undefined = created.data;
  check(created.response.status === 201 && link !== undefined && link.url === 'https://example.com/generated-client', 'createLink answers 201 with a Link');
  check(created.response.headers.get('location') === `/api/v1/links/${link!.code}`, 'createLink sends the Location it documents');

  const read = await generation.GET('/api/v1/links/{code}', { params: { path: { code: link!.code } } });
  check(read.data?.title === 'from a generated client', 'getLink reads it back');

  const missing = await generation.GET('/api/v1/links/{code}', { params: { path: { code: 'nosuchcode1' } } });
  const problem: NotFound | undefined = missing.error as NotFound | undefined;
  check(missing.response.status === 404 && problem?.code === 'LINK_NOT_FOUND', 'getLink of an unknown code is a NotFoundProblem with code LINK_NOT_FOUND');

  const stats = await analytics.GET('/api/v1/links/{code}/stats', { params: { path: { code: link!.code } } });
  // JSON or CSV by Accept (?format=csv): the generated type is the union of both.
  const series: LinkStats | string | undefined = stats.data;
  check(stats.response.status === 200 && typeof series === 'object' && series.code === link!.code, 'getLinkStats answers LinkStats for the new link');
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  },
);
