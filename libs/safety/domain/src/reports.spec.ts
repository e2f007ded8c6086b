import { BrokenLinkSettingsService } from './broken-links';
import { LinkRef } from './ports';
import { ReportIntake, ReportLimit, ReportRelay } from './reports';
import { safetyWorld } from './testing';

/** Allows `limit` reports per address, then refuses with a wait. */
class CountingLimit implements ReportLimit {
  readonly seen = new Map<string, number>();
  constructor(private readonly limit: number) {}
  async admit(address: string) {
    const n = (this.seen.get(address) ?? 0) + 1;
    this.seen.set(address, n);
    return n <= this.limit ? { allowed: true, retryAfterSeconds: 0 } : { allowed: false, retryAfterSeconds: 1800 };
  }
}

const LINK: LinkRef = { linkId: '42', domain: 'sho.rt', code: 'abc1234', tenantId: 't1' };
const OTHER: LinkRef = { linkId: '43', domain: 'sho.rt', code: 'abc1235', tenantId: 't1' };

describe('visitors’ reports (docs/design.md, "Trust and safety")', () => {
  it('takes a reason from the list and optional details, one report per visitor and link, within the visitor’s limit; stores no address', async () => {
    const w = safetyWorld();
    const intake = new ReportIntake(w.store, new CountingLimit(3), 'visitor-secret', w.clock);
    expect(await intake.submit(LINK, { reason: 'phishing', details: '  asks for my bank password\u0007  ' }, '198.51.100.7')).toBe('accepted');
    expect(await intake.submit(LINK, { reason: 'spam' }, '198.51.100.7')).toBe('duplicate');
    expect(await intake.submit(OTHER, { reason: 'malware', details: null }, '198.51.100.7')).toBe('accepted');
    await expect(intake.submit(OTHER, { reason: 'scam' }, '198.51.100.7')).rejects.toMatchObject({
      code: 'RATE_LIMITED',
      details: { retryAfterSeconds: 1800 },
    });
    const stored = await w.store.reportsOf(LINK.linkId, 10);
    expect(stored).toEqual([expect.objectContaining({ reason: 'phishing', details: 'asks for my bank password', tenantId: 't1' })]);
    expect(JSON.stringify([...w.store.reports.values()])).not.toContain('198.51.100.7');
    await expect(intake.submit(LINK, { reason: 'nonsense' }, '203.0.113.1')).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'reason' } });
    await expect(intake.submit(LINK, { reason: 'other', details: 'x'.repeat(1001) }, '203.0.113.1')).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { field: 'details' },
    });
  });

  it('relays new reports to the tenant’s audit log and the operators’ queue, once, reopening a resolved item', async () => {
    const w = safetyWorld();
    const intake = new ReportIntake(w.store, new CountingLimit(100), 'k', w.clock);
    const relay = new ReportRelay(w.store, w.store, w.notices);
    await intake.submit(LINK, { reason: 'phishing' }, 'a');
    await intake.submit(LINK, { reason: 'scam' }, 'b');
    expect(await relay.relay()).toBe(2);
    expect(await relay.relay()).toBe(0);
    expect(w.notices.reports.map((r) => r.reason)).toEqual(['phishing', 'scam']);
    expect(await w.store.queueItem(LINK.linkId)).toMatchObject({ state: 'open', reports: 2 });
    await w.store.resolve(LINK, { action: 'clear', reason: null, by: 'operator', at: new Date(w.now.t) });
    w.now.t += 1000;
    await intake.submit(LINK, { reason: 'spam' }, 'c');
    await relay.relay();
    expect(await w.store.queueItem(LINK.linkId)).toMatchObject({ state: 'open', reports: 1, resolution: null });
  });
});

describe('a tenant’s choice for visitors of broken links', () => {
  it('is the target by default; a page, or a URL that passes the URL policy; versioned', async () => {
    const w = safetyWorld();
    const checked: string[] = [];
    const service = new BrokenLinkSettingsService(
      w.store,
      async (raw) => {
        if (typeof raw !== 'string' || !raw.startsWith('https://')) throw Object.assign(new Error('bad'), { code: 'INVALID_URL' });
        checked.push(raw);
        return raw;
      },
      w.clock.now,
    );
    expect(await service.get('t1')).toMatchObject({ mode: 'target', url: null, version: 0 });
    await expect(service.update('t1', { mode: 'url' }, null)).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'url' } });
    await expect(service.update('t1', { mode: 'page', url: 'https://x.example/' }, null)).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(service.update('t1', { mode: 'elsewhere' }, null)).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'mode' } });
    await expect(service.update('t1', { mode: 'url', url: 'ftp://x' }, null)).rejects.toMatchObject({ code: 'INVALID_URL' });
    const saved = await service.update('t1', { mode: 'url', url: 'https://help.example/moved' }, 0);
    expect(saved).toMatchObject({ mode: 'url', url: 'https://help.example/moved', version: 1 });
    await expect(service.update('t1', { mode: 'page' }, 0)).rejects.toMatchObject({ code: 'PRECONDITION_FAILED', details: { currentVersion: 1 } });
    expect(await service.update('t1', { mode: 'page' }, null)).toMatchObject({ mode: 'page', url: null, version: 2 });
    expect(checked).toEqual(['https://help.example/moved']);
    expect(await w.store.allBrokenLinkSettings()).toEqual([{ tenantId: 't1', settings: expect.objectContaining({ mode: 'page' }) }]);
  });
});
