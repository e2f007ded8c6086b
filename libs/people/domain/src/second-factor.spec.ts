import { randomBytes } from 'crypto';
import { generate, generateSecret } from 'otplib';
import { AuditLog } from '@shortlink/audit-domain';
import { InMemoryAuditLogStore } from '@shortlink/audit-domain/testing';
import { ListCursors } from '@shortlink/links-domain';
import { plainPasswords } from '@shortlink/links-domain/testing';
import { LocalRateWindows, Tenant } from '@shortlink/tenants-domain';
import { MemberService } from './member-service';
import { SecondFactorService, SecretBox } from './second-factor';
import { SessionService } from './session-service';
import { SignInThrottle } from './sign-in-throttle';
import { InMemoryPeopleStore } from './testing/in-memory-people-store';

const tenant: Tenant = { id: 't1', name: 'Acme', plan: 'free', status: 'active', createdAt: new Date(0) };
const PASSWORD = 'a long passphrase';

/**
 * The services of one person's sign-in (the in-memory store, a fake clock): `limits` of the
 * sign-in throttle, the audit log if any, the person's email and the address it signs in from.
 */
function setup(options: { limits?: { perAccount: number; perAddress: number }; audit?: AuditLog | null; email?: string; address?: string } = {}) {
  const { limits = { perAccount: 3, perAddress: 50 }, audit = null, email = 'bo@example.com', address = '192.0.2.7' } = options;
  const now = { t: Date.UTC(2026, 0, 1, 12, 0, 0) };
  const clock = { now: () => now.t };
  const store = new InMemoryPeopleStore((id) => (id === tenant.id ? tenant : null));
  const box = new SecretBox(randomBytes(32));
  const throttle = new SignInThrottle(new LocalRateWindows(clock), { ...limits, windowMs: 300_000 });
  const factor = new SecondFactorService({ store, box, audit, throttle }, { issuer: 'shortlink', clock });
  const members = new MemberService(
    { store, passwords: plainPasswords, mailer: null },
    { invitationTtlMs: 3_600_000, acceptUrl: 'https://c/accept', passwordMinLength: 12, clock },
  );
  const sessions = new SessionService(
    { store, passwords: plainPasswords, throttle, audit },
    { idleMs: 600_000, absoluteMs: 3_600_000, cacheMs: 0, secondFactor: factor, clock },
  );
  const codeOf = (secret: string, offsetSeconds = 0) => generate({ secret, epoch: Math.floor(now.t / 1000) + offsetSeconds });
  const signIn = (more: { code?: string; recoveryCode?: string } = {}) => sessions.signIn({ email, password: PASSWORD, ...more }, address);
  const join = async () => {
    const { invitation } = await members.invite('t1', { kind: 'key' }, { email, role: 'owner' });
    return members.accept({ token: invitation.token, password: PASSWORD }, null);
  };
  /** A member with the factor on: its secret and recovery codes. */
  const enrolled = async () => {
    const member = await join();
    const { secret } = await factor.begin(member);
    const { recoveryCodes } = await factor.confirm(member, await codeOf(secret), null);
    now.t += 30_000;
    return { member, secret, recoveryCodes };
  };
  return { now, store, box, factor, sessions, codeOf, signIn, join, enrolled };
}

describe('second factor (TOTP and recovery codes)', () => {
  const auditStore = new InMemoryAuditLogStore();
  const audit = new AuditLog(auditStore, { cursors: ListCursors.ephemeral(), retentionMs: 1e9 });
  const { now, store, factor, codeOf, signIn, join } = setup({
    limits: { perAccount: 10, perAddress: 10 },
    audit,
    email: 'ana@example.com',
    address: '192.0.2.1',
  });

  it('enrols with a code of the new secret, then asks every sign-in for a code, each used once, or a recovery code', async () => {
    const member = await join();
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

describe('second factor: a session alone does not change it', () => {
  it('moves to another app only with the current factor (a code or a recovery code, spent); until confirmed the old one stays', async () => {
    const { factor, codeOf, signIn, enrolled, now } = setup({ limits: { perAccount: 10, perAddress: 50 } });
    const { member, secret, recoveryCodes } = await enrolled();
    await expect(factor.begin(member)).rejects.toMatchObject({ code: 'SECOND_FACTOR_REQUIRED' });
    await expect(factor.begin(member, { code: '000000' }, '192.0.2.7')).rejects.toMatchObject({ code: 'SECOND_FACTOR_INVALID' });
    await expect(factor.begin(member, { recoveryCode: 'aaaaa-bbbbb' }, '192.0.2.7')).rejects.toMatchObject({ code: 'SECOND_FACTOR_INVALID' });
    expect(await factor.status(member)).toEqual({ enabled: true, pending: false });

    const moved = await factor.begin(member, { recoveryCode: recoveryCodes[0] }, '192.0.2.7');
    expect(await factor.status(member)).toEqual({ enabled: true, pending: true });
    await expect(factor.begin(member, { recoveryCode: recoveryCodes[0] }, null)).rejects.toMatchObject({ code: 'SECOND_FACTOR_INVALID' }); // spent
    // The authenticator in use still signs in until the move is confirmed.
    expect((await signIn({ code: await codeOf(secret) })).member.id).toBe(member.id);
    now.t += 30_000;
    const { recoveryCodes: fresh } = await factor.confirm(member, await codeOf(moved.secret), null);
    now.t += 30_000;
    await expect(signIn({ code: await codeOf(secret) })).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await expect(signIn({ recoveryCode: recoveryCodes[1] })).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect((await signIn({ code: await codeOf(moved.secret) })).member.id).toBe(member.id);
    expect((await signIn({ recoveryCode: fresh[0] })).member.id).toBe(member.id);
  });

  it('confirms no secret set while the factor is on unless the move was started with it in the last ten minutes', async () => {
    const { factor, store, box, codeOf, enrolled, now } = setup();
    const { member, recoveryCodes } = await enrolled();
    // A pending secret without a proof (as sealed before moves existed) does not replace the factor.
    const planted = generateSecret();
    await store.setPendingSecondFactor(member.id, box.seal(member.id, planted));
    await expect(factor.confirm(member, await codeOf(planted), null)).rejects.toMatchObject({ code: 'SECOND_FACTOR_REQUIRED' });
    // A move started with the factor, confirmed too late.
    const moved = await factor.begin(member, { recoveryCode: recoveryCodes[0] }, null);
    now.t += 10 * 60_000 + 1;
    await expect(factor.confirm(member, await codeOf(moved.secret), null)).rejects.toMatchObject({ code: 'SECOND_FACTOR_REQUIRED' });
    expect(await factor.status(member)).toEqual({ enabled: true, pending: true });
  });

  it('counts wrong codes and recovery codes to turn it off or move it with the sign-in failures: 429 past the limit, until the window ends', async () => {
    const { factor, codeOf, signIn, enrolled, now } = setup();
    const { member, secret, recoveryCodes } = await enrolled();
    await expect(factor.disable(member, { code: '000000' }, '192.0.2.7')).rejects.toMatchObject({ code: 'SECOND_FACTOR_INVALID' });
    await expect(factor.disable(member, { recoveryCode: 'zzzzz-zzzzz' }, '192.0.2.8')).rejects.toMatchObject({ code: 'SECOND_FACTOR_INVALID' });
    await expect(factor.begin(member, { code: '123456' }, '192.0.2.9')).rejects.toMatchObject({ code: 'SECOND_FACTOR_INVALID' });
    // Three failures of the account (perAccount 3): the right recovery code is refused too, before it is spent.
    const refused = factor.disable(member, { recoveryCode: recoveryCodes[0] }, '192.0.2.7');
    await expect(refused).rejects.toMatchObject({ code: 'RATE_LIMITED', details: { retryAfterSeconds: expect.any(Number) } });
    await expect(factor.begin(member, { recoveryCode: recoveryCodes[0] }, null)).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    await expect(signIn({ code: await codeOf(secret) })).rejects.toMatchObject({ code: 'RATE_LIMITED' }); // the sign-in's own window
    expect(await factor.status(member)).toEqual({ enabled: true, pending: false });
    now.t += 300_000;
    await factor.disable(member, { recoveryCode: recoveryCodes[0] }, '192.0.2.7');
    expect(await factor.status(member)).toEqual({ enabled: false, pending: false });
  });

  it('counts failed sign-ins and wrong codes to turn it off in one window per client address', async () => {
    const { factor, sessions, enrolled } = setup({ limits: { perAccount: 100, perAddress: 2 } });
    const { member, recoveryCodes } = await enrolled();
    await expect(sessions.signIn({ email: 'nobody@example.com', password: 'a wrong password' }, '192.0.2.50')).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
    });
    await expect(factor.disable(member, { code: '000000' }, '192.0.2.50')).rejects.toMatchObject({ code: 'SECOND_FACTOR_INVALID' });
    await expect(factor.disable(member, { recoveryCode: recoveryCodes[0] }, '192.0.2.50')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    await factor.disable(member, { recoveryCode: recoveryCodes[0] }, '192.0.2.51');
    expect(await factor.status(member)).toEqual({ enabled: false, pending: false });
  });
});
