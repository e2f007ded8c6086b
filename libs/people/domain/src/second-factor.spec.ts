import { randomBytes } from 'crypto';
import { generate } from 'otplib';
import { AuditLog } from '@shortlink/audit-domain';
import { InMemoryAuditLogStore } from '@shortlink/audit-domain/testing';
import { ListCursors } from '@shortlink/links-domain';
import { plainPasswords } from '@shortlink/links-domain/testing';
import { LocalRateWindows, Tenant } from '@shortlink/tenants-domain';
import { MemberService } from './member-service';
import { SecondFactorService, SecretBox } from './second-factor';
import { SessionService } from './session-service';
import { InMemoryPeopleStore } from './testing/in-memory-people-store';

const tenant: Tenant = { id: 't1', name: 'Acme', plan: 'free', status: 'active', createdAt: new Date(0) };
const PASSWORD = 'a long passphrase';

describe('second factor (TOTP and recovery codes)', () => {
  const now = { t: Date.UTC(2026, 0, 1, 12, 0, 0) };
  const clock = { now: () => now.t };
  const store = new InMemoryPeopleStore((id) => (id === tenant.id ? tenant : null));
  const auditStore = new InMemoryAuditLogStore();
  const audit = new AuditLog(auditStore, { cursors: ListCursors.ephemeral(), retentionMs: 1e9 });
  const factor = new SecondFactorService(store, new SecretBox(randomBytes(32)), audit, 'shortlink', clock);
  const members = new MemberService(store, plainPasswords, null, { invitationTtlMs: 3_600_000, acceptUrl: 'https://c/accept', passwordMinLength: 12 }, clock);
  const sessions = new SessionService(
    store,
    plainPasswords,
    new LocalRateWindows(clock),
    audit,
    { idleMs: 600_000, absoluteMs: 3_600_000, throttle: { perAccount: 10, perAddress: 10, windowMs: 300_000 }, cacheMs: 0, secondFactor: factor },
    clock,
  );
  const codeOf = (secret: string, offsetSeconds = 0) => generate({ secret, epoch: Math.floor(now.t / 1000) + offsetSeconds });
  const signIn = (more: { code?: string; recoveryCode?: string } = {}) =>
    sessions.signIn({ email: 'ana@example.com', password: PASSWORD, ...more }, '192.0.2.1');

  it('enrols with a code of the new secret, then asks every sign-in for a code, each used once, or a recovery code', async () => {
    const { invitation } = await members.invite('t1', { kind: 'key' }, { email: 'ana@example.com', role: 'owner' });
    const member = await members.accept({ token: invitation.token, password: PASSWORD }, null);
    expect((await signIn()).member.id).toBe(member.id); // no factor yet
    expect(await factor.status(member)).toEqual({ enabled: false, pending: false });

    const { secret, uri } = await factor.begin(member);
    expect(await factor.status(member)).toEqual({ enabled: false, pending: true });
    expect(uri).toBe(`otpauth://totp/shortlink:ana%40example.com?secret=${secret}&issuer=shortlink`);
    expect(JSON.stringify([...store.secondFactors.values()])).not.toContain(secret); // sealed at rest
    await expect(factor.confirm(member, '000000', null)).rejects.toMatchObject({ code: 'SECOND_FACTOR_INVALID' });
    const { recoveryCodes } = await factor.confirm(member, await codeOf(secret), null);
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    expect(await factor.status(member)).toEqual({ enabled: true, pending: false });

    await expect(signIn()).rejects.toMatchObject({ code: 'SECOND_FACTOR_REQUIRED' });
    now.t += 30_000;
    const code = await codeOf(secret);
    expect((await signIn({ code })).member.id).toBe(member.id);
    await expect(signIn({ code })).rejects.toMatchObject({ code: 'UNAUTHENTICATED' }); // replayed
    now.t += 30_000;
    expect((await signIn({ code: await codeOf(secret, 30) })).member.id).toBe(member.id); // a phone one step ahead
    await expect(signIn({ code: await codeOf(secret, -120) })).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });

    const recovery = recoveryCodes[0].toUpperCase();
    expect((await signIn({ recoveryCode: recovery })).member.id).toBe(member.id);
    await expect(signIn({ recoveryCode: recovery })).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });

    await expect(factor.disable(member, {}, null)).rejects.toMatchObject({ code: 'SECOND_FACTOR_INVALID' });
    await factor.disable(member, { recoveryCode: recoveryCodes[1] }, null);
    expect(await factor.status(member)).toEqual({ enabled: false, pending: false });
    expect((await signIn()).member.id).toBe(member.id);
    expect(auditStore.entries.filter((e) => e.action === 'member.second_factor_changed').map((e) => e.details)).toEqual([
      { enabled: true },
      { enabled: false },
    ]);
    expect(auditStore.entries.filter((e) => e.action === 'auth.sign_in_failed').map((e) => e.details?.reason)).toEqual([
      'wrong_second_factor',
      'wrong_second_factor',
      'wrong_second_factor',
    ]);
  });
});
