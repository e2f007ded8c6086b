import { InProcessGeneration, startGenerationInProcess } from '../testing/in-process-generation';

/** Invitations per tenant and hour by plan (docs/design.md, "Tenants, keys and plans"), in process; over HTTP on both profiles in test/e2e. */
describe('invitations per tenant and hour', () => {
  const OPERATOR = 'sl_invitation_limit_spec_operator_012345';
  let generation: InProcessGeneration;

  beforeAll(async () => {
    generation = await startGenerationInProcess(OPERATOR, { PLAN_FREE_INVITATIONS_PER_HOUR: '3', PLAN_PAID_INVITATIONS_PER_HOUR: '5' });
  }, 60_000);

  afterAll(() => generation?.close());

  const tenantKey = async (plan: 'free' | 'paid') =>
    (await generation.call(OPERATOR, 'POST', '/api/v1/admin/tenants', { name: `inv-${plan}`, plan })).json().apiKey as string;
  const invite = (key: string, email: string) => generation.call(key, 'POST', '/api/v1/members', { email, role: 'viewer' });

  it("sends the plan's invitations of a tenant, then answers 429 INVITATION_LIMIT_REACHED with Retry-After, storing nothing", async () => {
    const free = await tenantKey('free');
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await invite(free, `outside-${i}@example.net`)).statusCode);
    expect(statuses).toEqual([201, 201, 201, 429, 429]);
    const refused = await invite(free, 'one-more@example.net');
    expect(refused.headers['content-type']).toContain('application/problem+json');
    expect(refused.json()).toMatchObject({ status: 429, code: 'INVITATION_LIMIT_REACHED', limit: 3 });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3000); // the first leaves the sliding hour in about an hour
    const members = (await generation.call(free, 'GET', '/api/v1/members')).json().members as Array<{ email: string }>;
    expect(members.map((m) => m.email).sort()).toEqual(['outside-0@example.net', 'outside-1@example.net', 'outside-2@example.net']);
    // A request refused for another reason counts too: the limit is on what a tenant may try.
    const paid = await tenantKey('paid');
    expect((await invite(paid, 'not-an-address')).statusCode).toBe(400);
    for (let i = 0; i < 4; i++) expect((await invite(paid, `paid-${i}@example.net`)).statusCode).toBe(201);
    expect((await invite(paid, 'paid-5@example.net')).json().code).toBe('INVITATION_LIMIT_REACHED');
    // Another tenant of the same plan has its own hour.
    expect((await invite(await tenantKey('free'), 'other@example.net')).statusCode).toBe(201);
  });
});
