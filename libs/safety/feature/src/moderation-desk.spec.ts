import type { AuditContext } from '@shortlink/audit-domain';
import { DomainError, ErrorCode } from '@shortlink/core';
import { LinkChangeHooks, LinkCommands, LinkUpdate, ListCursors } from '@shortlink/links-domain';
import { ReportRelay } from '@shortlink/safety-domain';
import { safetyWorld } from '@shortlink/safety-domain/testing';
import type { TenantDirectory, TenantService } from '@shortlink/tenants-domain';
import { ModerationDesk } from './moderation-desk';
import type { AuditedSafetyNotices } from './safety-notices';

const OPERATOR: AuditContext = { actor: { type: 'key', id: 'k1', name: 'operator key' }, clientAddress: '203.0.113.1' };

/** The hooks LinkCommands calls after each change (the audit entry and the webhook event in the app), recorded. */
function recordingHooks() {
  const moderated: Array<{ context: AuditContext; change: LinkUpdate }> = [];
  const none = async () => undefined;
  const hooks: LinkChangeHooks<AuditContext> = {
    created: none,
    edited: none,
    deleted: none,
    batch: none,
    bulk: none,
    moderated: async (context, change) => void moderated.push({ context, change }),
  };
  return { hooks, moderated };
}

describe('ModerationDesk (docs/design.md, "Trust and safety")', () => {
  const setup = () => {
    const world = safetyWorld();
    const { hooks, moderated } = recordingHooks();
    const flagged: string[] = [];
    const suspended: string[] = [];
    const desk = new ModerationDesk({
      store: world.store,
      commands: new LinkCommands(world.service, hooks),
      repository: world.repo,
      tenants: { updateTenant: async (id: string) => void suspended.push(id) } as unknown as TenantService,
      directory: { refresh: async () => undefined, isSuspended: (id: string) => suspended.includes(id) } as unknown as TenantDirectory,
      feed: world.feed,
      notices: { flagged: (link: { code: string }) => void flagged.push(link.code) } as unknown as AuditedSafetyNotices,
      cursors: new ListCursors('secret'),
      clock: world.clock,
    });
    return { ...world, desk, moderated, flagged, suspended };
  };

  it('a reported link reaches the queue; a ban goes through the link commands (hooks told, a new version in the caches and on the channel) and resolves the item', async () => {
    const { desk, service, store, notices, cache, feed, moderated, flagged } = setup();
    const link = await service.create({ tenantId: 't1', url: 'https://example.com/reported' });
    const ref = { linkId: link.id, domain: link.domain, code: link.code, tenantId: link.tenantId };
    await store.addReport({ ...ref, id: 'r1', reason: 'phishing', details: 'bank', reporter: 'a'.repeat(32), createdAt: new Date() });
    expect(await new ReportRelay(store, store, notices).relay()).toBe(1);

    const open = await desk.queue('open', 10, null);
    expect(open.items.map((i) => ({ code: i.item.code, reports: i.item.reports, reasons: i.reports.map((r) => r.reason) }))).toEqual([
      { code: link.code, reports: 1, reasons: ['phishing'] },
    ]);

    const published = feed.published.length;
    const after = await desk.act(link, 'ban', 'phishing, confirmed', OPERATOR);
    expect(after.item.state).toBe('resolved');
    expect(after.item.resolution).toMatchObject({ action: 'ban', reason: 'phishing, confirmed', by: 'operator key' });
    expect(after.link).toMatchObject({ moderation: 'banned', moderationReason: 'phishing, confirmed', moderationSource: 'operator', version: 2 });
    expect(moderated).toHaveLength(1);
    expect(moderated[0]).toMatchObject({ context: OPERATOR, change: { before: { moderation: 'clear' }, after: { moderation: 'banned' } } });
    expect(flagged).toEqual([link.code]);
    expect(cache.values.get(`${link.domain}/${link.code}`)).toMatchObject({ moderation: 'banned', version: 2 });
    expect(feed.published.slice(published)).toContainEqual(expect.objectContaining({ domain: link.domain, code: link.code, version: 2 }));
    expect((await desk.queue('open', 10, null)).items).toEqual([]);
  });

  it('flag and ban need a reason; clear does not, and tells nobody the link was flagged', async () => {
    const { desk, service, moderated, flagged } = setup();
    const link = await service.create({ tenantId: 't1', url: 'https://example.com/x' });
    await expect(desk.act(link, 'flag', null, OPERATOR)).rejects.toMatchObject({ code: ErrorCode.VALIDATION_FAILED });
    expect(moderated).toEqual([]);
    await desk.act(link, 'flag', 'looks like phishing', OPERATOR);
    const cleared = await desk.act(link, 'clear', null, OPERATOR);
    expect(cleared.link).toMatchObject({ moderation: 'clear', moderationReason: null, version: 3 });
    expect(flagged).toEqual([link.code]);
  });

  it('an unknown link is LINK_NOT_FOUND; suspending a tenant tells every redirect to read its tenants again', async () => {
    const { desk, service, feed, suspended } = setup();
    await expect(desk.act({ domain: 'sho.rt', code: 'nosuch' }, 'ban', 'x', OPERATOR)).rejects.toBeInstanceOf(DomainError);
    const link = await service.create({ tenantId: 't9', url: 'https://example.com/y' });
    const after = await desk.act(link, 'suspend-tenant', 'spam operation', OPERATOR);
    expect(suspended).toEqual(['t9']);
    expect(after.tenantSuspended).toBe(true);
    expect(feed.published.at(-1)).toMatchObject({ domain: '', code: '' });
  });
});
