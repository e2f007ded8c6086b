import { AuditLog } from '@shortlink/audit-domain';
import { InMemoryAuditLogStore } from '@shortlink/audit-domain/testing';
import { ListCursors } from '@shortlink/links-domain';
import { plainPasswords } from '@shortlink/links-domain/testing';
import { LocalRateWindows, Tenant } from '@shortlink/tenants-domain';
import { checkNewPassword } from './password-policy';
import { MemberService } from './member-service';
import { OutgoingMail } from './ports';
import { csrfMatches, SessionService } from './session-service';
import { SignInThrottle } from './sign-in-throttle';
import { InMemoryPeopleStore } from './testing/in-memory-people-store';

const tenant: Tenant = { id: 't1', name: 'Acme', plan: 'free', status: 'active', createdAt: new Date(0) };
const keyContext = { actor: { type: 'key' as const, id: 'k1', name: 'first key' }, clientAddress: '192.0.2.1' };
const KEY = { kind: 'key' as const };

function setup(now = { t: Date.UTC(2026, 0, 1) }) {
  const store = new InMemoryPeopleStore((id) => (id === tenant.id ? tenant : null));
  const sent: OutgoingMail[] = [];
  const members = new MemberService(
    { store, passwords: plainPasswords, mailer: { send: async (mail) => void sent.push(mail) } },
    { invitationTtlMs: 3_600_000, acceptUrl: 'https://console.example/accept', passwordMinLength: 12, clock: { now: () => now.t } },
  );
  const auditStore = new InMemoryAuditLogStore();
  const audit = new AuditLog(auditStore, { cursors: ListCursors.ephemeral(), retentionMs: 1e9 });
  const clock = { now: () => now.t };
  const throttle = new SignInThrottle(new LocalRateWindows(clock), { perAccount: 3, perAddress: 5, windowMs: 300_000 });
  const sessions = new SessionService({ store, passwords: plainPasswords, throttle, audit }, { idleMs: 600_000, absoluteMs: 3_600_000, cacheMs: 0, clock });
  const join = async (email: string, role: string, password = 'a long passphrase') => {
    const { invitation } = await members.invite('t1', KEY, { email, role }, keyContext, 'Acme');
    return members.accept({ token: invitation.token, password }, '192.0.2.9');
  };
  return { store, sent, members, sessions, auditStore, join, now };
}

describe('members', () => {
  it('invites with a token shown once (stored as its hash), mails it, and the invitation is accepted once with a strong password', async () => {
    const { store, sent, members } = setup();
    const { member, invitation } = await members.invite('t1', KEY, { email: ' Ana@Example.com ', role: 'editor' }, keyContext, 'Acme');
    expect(member).toMatchObject({ email: 'ana@example.com', role: 'editor', status: 'invited' });
    expect(invitation.url).toBe(`https://console.example/accept#token=${invitation.token}`);
    expect(invitation.mailed).toBe(true);
    expect(sent[0]).toMatchObject({ to: 'ana@example.com', subject: 'You are invited to Acme' });
    expect(sent[0].text).toContain(invitation.url);
    expect(JSON.stringify(store.rows)).not.toContain(invitation.token);
    await expect(members.invite('t1', KEY, { email: 'ana@example.com', role: 'viewer' })).rejects.toMatchObject({ code: 'MEMBER_EXISTS' });
    await expect(members.accept({ token: invitation.token, password: 'password1234' }, null)).rejects.toMatchObject({ code: 'PASSWORD_TOO_WEAK' });
    await expect(members.accept({ token: invitation.token, password: 'short' }, null)).rejects.toMatchObject({ code: 'PASSWORD_TOO_WEAK' });
    expect(await members.accept({ token: invitation.token, password: 'a long passphrase' }, null)).toMatchObject({ status: 'active' });
    await expect(members.accept({ token: invitation.token, password: 'a long passphrase' }, null)).rejects.toMatchObject({ code: 'INVITATION_INVALID' });
    expect(store.entries.map((e) => e.action)).toEqual(['member.invited', 'member.joined']);
  });

  it('refuses an expired invitation', async () => {
    const { members, now } = setup();
    const { invitation } = await members.invite('t1', KEY, { email: 'bo@example.com', role: 'viewer' });
    now.t += 3_600_001;
    await expect(members.accept({ token: invitation.token, password: 'a long passphrase' }, null)).rejects.toMatchObject({ code: 'INVITATION_INVALID' });
  });

  it('keeps one active owner, and lets only owners (and keys) touch owners', async () => {
    const { members, join } = setup();
    const owner = await join('owner@example.com', 'owner');
    const admin = await join('admin@example.com', 'admin');
    await expect(members.changeRole('t1', KEY, owner.id, 'admin')).rejects.toMatchObject({ code: 'LAST_OWNER' });
    await expect(members.removeMember('t1', KEY, owner.id)).rejects.toMatchObject({ code: 'LAST_OWNER' });
    const asAdmin = { kind: 'person' as const, memberId: admin.id, role: 'admin' as const };
    await expect(members.changeRole('t1', asAdmin, owner.id, 'viewer')).rejects.toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
    await expect(members.invite('t1', asAdmin, { email: 'x@example.com', role: 'owner' })).rejects.toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
    const asOwner = { kind: 'person' as const, memberId: owner.id, role: 'owner' as const };
    expect(await members.changeRole('t1', asOwner, admin.id, 'owner', keyContext)).toMatchObject({ role: 'owner' });
    expect(await members.changeRole('t1', asOwner, owner.id, 'viewer')).toMatchObject({ role: 'viewer' });
    await expect(members.getMember('t1', 'nobody')).rejects.toMatchObject({ code: 'MEMBER_NOT_FOUND' });
    await expect(members.changeRole('t1', KEY, owner.id, 'emperor')).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
  });
});

describe('sessions', () => {
  it('signs in with the password, answers the role’s scopes and a CSRF token, and records the sign-in', async () => {
    const { sessions, join, auditStore } = setup();
    const member = await join('ed@example.com', 'editor');
    const signed = await sessions.signIn({ email: 'ED@example.com', password: 'a long passphrase' }, '192.0.2.4');
    expect(signed.token).toMatch(/^ses_/);
    const verified = await sessions.verify(signed.token);
    expect(verified.principal).toMatchObject({
      tenantId: 't1',
      scopes: ['links:read', 'links:write', 'analytics:read', 'keys:write', 'conversions:write'],
      actor: { kind: 'person', id: member.id },
    });
    expect(csrfMatches(verified.csrfToken, signed.csrfToken)).toBe(true);
    expect(csrfMatches(verified.csrfToken, 'x')).toBe(false);
    await sessions.signOut(signed.token, '192.0.2.4');
    await expect(sessions.verify(signed.token)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(auditStore.entries.map((e) => [e.action, e.actor.name])).toEqual([
      ['auth.signed_in', 'ed@example.com'],
      ['auth.signed_out', 'ed@example.com'],
    ]);
  });

  it('ends a session after its idle and absolute lifetimes, and at once when the member is removed', async () => {
    const { sessions, members, join, now } = setup();
    const member = await join('vi@example.com', 'viewer');
    const login = () => sessions.signIn({ email: 'vi@example.com', password: 'a long passphrase' }, null);
    const idle = await login();
    now.t += 600_001;
    await expect(sessions.verify(idle.token)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    const busy = await login();
    for (let i = 0; i < 8; i++) {
      now.t += 500_000;
      if (i < 7) await sessions.verify(busy.token); // used every 500 s: only the absolute lifetime (3600 s) ends it
    }
    await expect(sessions.verify(busy.token)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    const removed = await login();
    await members.removeMember('t1', KEY, member.id);
    await expect(sessions.verify(removed.token)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('throttles failed sign-ins per account with 429 and Retry-After, for at most the window, and records each failure', async () => {
    const { sessions, join, now, auditStore } = setup();
    await join('ow@example.com', 'owner');
    const attempt = (password: string, address = '198.51.100.1') => sessions.signIn({ email: 'ow@example.com', password }, address);
    for (let i = 0; i < 3; i++) await expect(attempt('wrong guess!!')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    const refused = await attempt('a long passphrase', '203.0.113.5').catch((e) => e);
    expect(refused).toMatchObject({ code: 'RATE_LIMITED' });
    expect(refused.details.retryAfterSeconds).toBeGreaterThan(0);
    expect(refused.details.retryAfterSeconds).toBeLessThanOrEqual(300);
    now.t += 300_000;
    expect((await attempt('a long passphrase', '203.0.113.5')).member.email).toBe('ow@example.com');
    expect(auditStore.entries.filter((e) => e.action === 'auth.sign_in_failed')).toHaveLength(3);
  });

  it('throttles failed sign-ins per address over several accounts', async () => {
    const { sessions } = setup();
    for (let i = 0; i < 5; i++)
      await expect(sessions.signIn({ email: `nobody${i}@example.com`, password: 'whatever it is' }, '198.51.100.7')).rejects.toMatchObject({
        code: 'UNAUTHENTICATED',
      });
    await expect(sessions.signIn({ email: 'another@example.com', password: 'whatever it is' }, '198.51.100.7')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
  });
});

describe('password change', () => {
  it('checks the current password, ends the other sessions, keeps this one, and records it without the password', async () => {
    const { sessions, join, store } = setup();
    await join('pw@example.com', 'editor');
    const here = await sessions.signIn({ email: 'pw@example.com', password: 'a long passphrase' }, null);
    const there = await sessions.signIn({ email: 'pw@example.com', password: 'a long passphrase' }, null);
    const session = { token: here.token, member: here.member };
    await expect(sessions.changePassword(session, { currentPassword: 'wrong one!!', newPassword: 'new long passphrase' }, 12, null)).rejects.toMatchObject({
      code: 'PASSWORD_INCORRECT',
    });
    await expect(sessions.changePassword(session, { currentPassword: 'a long passphrase', newPassword: 'password1234' }, 12, null)).rejects.toMatchObject({
      code: 'PASSWORD_TOO_WEAK',
    });
    expect(await sessions.changePassword(session, { currentPassword: 'a long passphrase', newPassword: 'new long passphrase' }, 12, '192.0.2.1')).toEqual({
      sessionsEnded: 1,
    });
    await expect(sessions.verify(there.token)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect((await sessions.verify(here.token)).member.email).toBe('pw@example.com');
    await expect(sessions.signIn({ email: 'pw@example.com', password: 'a long passphrase' }, null)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect((await sessions.signIn({ email: 'pw@example.com', password: 'new long passphrase' }, null)).member.email).toBe('pw@example.com');
    const entry = store.entries.find((e) => e.action === 'member.password_changed')!;
    expect(entry.details).toEqual({ passwordChanged: true });
    expect(JSON.stringify(store.entries)).not.toContain('new long passphrase');
  });
});

describe('one email in two tenants', () => {
  it('asks for tenantId when the password opens both, and signs in to the one named', async () => {
    const other: Tenant = { ...tenant, id: 't2', name: 'Beta' };
    const store = new InMemoryPeopleStore((id) => (id === 't1' ? tenant : id === 't2' ? other : null));
    const failures: unknown[] = [];
    const members = new MemberService(
      { store, passwords: plainPasswords, mailer: { send: async () => Promise.reject(new Error('mail server down')) } },
      { invitationTtlMs: 3_600_000, acceptUrl: 'https://c/accept', passwordMinLength: 12, onMailFailure: (e) => failures.push(e) },
    );
    for (const t of ['t1', 't2']) {
      const { invitation } = await members.invite(t, KEY, { email: 'cy@example.com', role: 'viewer' });
      expect(invitation.mailed).toBe(false); // the mail failed; the invitation stands
      await members.accept({ token: invitation.token, password: 'a long passphrase' }, null);
    }
    expect(failures).toHaveLength(2);
    const throttle = new SignInThrottle(new LocalRateWindows(), { perAccount: 5, perAddress: 5, windowMs: 60_000 });
    const sessions = new SessionService({ store, passwords: plainPasswords, throttle, audit: null }, { idleMs: 600_000, absoluteMs: 3_600_000 });
    await expect(sessions.signIn({ email: 'cy@example.com', password: 'a long passphrase' }, null)).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: {
        field: 'tenantId',
        tenants: [
          { id: 't1', name: 'Acme' },
          { id: 't2', name: 'Beta' },
        ],
      },
    });
    expect((await sessions.signIn({ email: 'cy@example.com', password: 'a long passphrase', tenantId: 't2' }, null)).tenant.id).toBe('t2');
  });
});

describe('password policy', () => {
  it('refuses short, common, email-like and repetitive passwords', () => {
    expect(() => checkNewPassword('a'.repeat(11), 12, 'a@b.co')).toThrow('at least 12');
    expect(() => checkNewPassword('Password1234', 12, 'a@b.co')).toThrow('common');
    expect(() => checkNewPassword('someone@example.com', 12, 'someone@example.com')).toThrow('email');
    expect(() => checkNewPassword('abababababab', 12, 'a@b.co')).toThrow('repeat');
    expect(checkNewPassword('tall green lamp post', 12, 'a@b.co')).toBe('tall green lamp post');
  });
});
