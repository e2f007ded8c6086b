import { ListCursors } from '@shortlink/links-domain';
import { AuditContext, auditEntry, AuditEntry, diffOf, MAX_VALUE_CHARS, OPERATOR_LOG } from './audit-entry';
import { AuditLog } from './audit-log';
import { AuditLogStore } from './ports';
import { InMemoryAuditLogStore } from './testing/in-memory-audit-log-store';

const context: AuditContext = { actor: { type: 'key', id: 'key-1', name: 'ci key' }, clientAddress: '203.0.113.7' };
const T0 = Date.UTC(2026, 0, 15, 10, 0, 0);

function logOver(store: AuditLogStore, now = () => T0, more: Partial<ConstructorParameters<typeof AuditLog>[1]> = {}) {
  return new AuditLog(store, { cursors: ListCursors.ephemeral(), retentionMs: 365 * 86_400_000, clock: { now }, appendWaitMs: 200, retryMs: 20, ...more });
}

describe('audit entries', () => {
  it('carry the actor, the client address, the time and the facts; a field named like a secret is refused', () => {
    const at = new Date(T0);
    const entry = auditEntry(context, { log: 't1', action: 'key.created', target: { type: 'key', id: 'k9', domain: null }, details: { name: 'deploy' } }, at);
    expect(entry).toMatchObject({ log: 't1', at, actor: context.actor, clientAddress: '203.0.113.7', action: 'key.created', details: { name: 'deploy' } });
    expect(entry.id).toMatch(/^[0-9a-f-]{36}$/);
    for (const field of ['password', 'passwordHash', 'apiKey', 'secret', 'token', 'recoveryCodes']) {
      expect(() =>
        auditEntry(context, { log: 't1', action: 'link.edited', target: { type: 'link', id: 'a', domain: null }, details: { [field]: 'x' } }, at),
      ).toThrow(field);
      expect(() =>
        auditEntry(
          context,
          { log: 't1', action: 'link.edited', target: { type: 'link', id: 'a', domain: null }, changes: { [field]: { from: 'a', to: 'b' } } },
          at,
        ),
      ).toThrow(field);
    }
  });

  it('keep a short diff: only the fields that changed, dates as text, long values cut', () => {
    const before = { title: 'a', tags: ['x'], expiresAt: null as Date | null, note: 'same' };
    const after = { title: 'b', tags: ['x'], expiresAt: new Date(T0), note: 'same' };
    expect(diffOf(before, after, ['title', 'tags', 'expiresAt', 'note'])).toEqual({
      title: { from: 'a', to: 'b' },
      expiresAt: { from: null, to: new Date(T0).toISOString() },
    });
    expect(diffOf(before, before, ['title', 'tags'])).toBeNull();
    const long = 'y'.repeat(MAX_VALUE_CHARS * 2);
    const entry = auditEntry(
      context,
      { log: 't1', action: 'link.edited', target: { type: 'link', id: 'a', domain: null }, changes: { title: { from: 'a', to: long } } },
      new Date(),
    );
    expect(entry.changes!.title.to).toHaveLength(MAX_VALUE_CHARS);
    expect(String(entry.changes!.title.to).endsWith('…')).toBe(true);
  });
});

describe('AuditLog', () => {
  const made = (log: AuditLog, name: string, offset: number, action: AuditEntry['action'] = 'link.created') =>
    ({ ...log.entry(context, { log: 't1', action, target: { type: 'link', id: name, domain: 'sho.rt' } }), at: new Date(T0 + offset) }) as AuditEntry;

  it('pages a log newest first with a cursor bound to its log and filters', async () => {
    const store = new InMemoryAuditLogStore();
    const log = logOver(store);
    await store.append([made(log, 'a', 0), made(log, 'b', 1), made(log, 'c', 2), made(log, 'k', 3, 'key.created')]);
    await store.append([{ ...made(log, 'other', 4), log: OPERATOR_LOG }]);
    const first = await log.list('t1', { limit: 2, action: 'link' });
    expect(first.entries.map((e) => e.target.id)).toEqual(['c', 'b']);
    const second = await log.list('t1', { limit: 2, action: 'link', cursor: first.nextCursor });
    expect(second).toMatchObject({ entries: [expect.objectContaining({ target: expect.objectContaining({ id: 'a' }) })], nextCursor: null });
    await expect(log.list('t1', { limit: 2, action: 'key', cursor: first.nextCursor })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
    await expect(log.list(OPERATOR_LOG, { limit: 2, action: 'link', cursor: first.nextCursor })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
    expect((await log.list(OPERATOR_LOG, { limit: 5 })).entries.map((e) => e.target.id)).toEqual(['other']);
  });

  it('refuses bad filters with stable codes', async () => {
    const log = logOver(new InMemoryAuditLogStore());
    await expect(log.list('t1', { limit: 5, action: 'LINK;drop' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'action' } });
    await expect(log.list('t1', { limit: 5, from: 'yesterday' })).rejects.toMatchObject({ code: 'INVALID_TIME_RANGE', details: { parameter: 'from' } });
    await expect(log.list('t1', { limit: 5, from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' })).rejects.toMatchObject({ code: 'INVALID_TIME_RANGE' });
    expect(() => log.every('t1', { cursor: 'not-a-cursor' })).toThrow(expect.objectContaining({ code: 'INVALID_CURSOR' }));
  });

  it('reads every selected entry for the export, a page at a time', async () => {
    const store = new InMemoryAuditLogStore();
    const log = logOver(store);
    await store.append(Array.from({ length: 7 }, (_, i) => made(log, `l${i}`, i)));
    const seen: string[] = [];
    for await (const e of log.every('t1', { action: 'link.created' }, 3)) seen.push(e.target.id!);
    expect(seen).toEqual(['l6', 'l5', 'l4', 'l3', 'l2', 'l1', 'l0']);
  });

  it('keeps an entry the meta database refused and stores it once it answers, without failing the caller', async () => {
    const store = new InMemoryAuditLogStore();
    let down = true;
    const flaky: AuditLogStore = {
      append: (entries) => (down ? Promise.reject(new Error('meta database down')) : store.append(entries)),
      list: (q) => store.list(q),
      purgeBefore: (b, l) => store.purgeBefore(b, l),
    };
    const delivered: number[] = [];
    const log = logOver(flaky, () => T0, { events: { delivered: (n) => delivered.push(n) } });
    await log.record(made(log, 'a', 0));
    expect(log.pendingCount).toBe(1);
    expect(store.entries).toHaveLength(0);
    down = false;
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => log.pendingCount === 0 && (clearInterval(poll), resolve()), 10);
    });
    expect(store.entries.map((e) => e.target.id)).toEqual(['a']);
    expect(delivered).toEqual([1]);
    await log.stop();
  });

  it('records a sign-in and a failed one as the person, with why it failed and never what was typed', async () => {
    const store = new InMemoryAuditLogStore();
    const log = logOver(store);
    const person = { id: 'm-1', email: 'ana@example.com' };
    await log.recordSignIn({ tenantId: 't1', person, clientAddress: '192.0.2.4', succeeded: false, method: 'password', reason: 'wrong_password' });
    await log.recordSignIn({ tenantId: 't1', person, clientAddress: '192.0.2.4', succeeded: true, method: 'oidc' });
    expect(store.entries.map((e) => [e.action, e.actor, e.target.id, e.details])).toEqual([
      ['auth.sign_in_failed', { type: 'person', id: 'm-1', name: 'ana@example.com' }, 'm-1', { method: 'password', reason: 'wrong_password' }],
      ['auth.signed_in', { type: 'person', id: 'm-1', name: 'ana@example.com' }, 'm-1', { method: 'oidc' }],
    ]);
  });

  it('deletes what is past the retention, in batches, and keeps the rest', async () => {
    const store = new InMemoryAuditLogStore();
    const day = 86_400_000;
    const log = logOver(store, () => T0, { retentionMs: 30 * day, purgeBatch: 2 });
    await store.append([made(log, 'old1', -40 * day), made(log, 'old2', -35 * day), made(log, 'old3', -31 * day), made(log, 'new', -29 * day)]);
    expect(await log.purgeExpired()).toBe(3);
    expect(store.entries.map((e) => e.target.id)).toEqual(['new']);
  });
});
