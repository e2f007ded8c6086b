import { randomUUID } from 'crypto';
import { ApiKeyService } from './api-keys';
import { KEY_CEILING, KeyPerson, keyStanding, managerOf, mayManageKey, mayManageRole, Role, ROLE_SCOPES } from './authority';
import { ApiKeyVerifier, Principal } from './credentials';
import { TenantService } from './tenant-service';
import { SCOPES } from './tenant';
import { InMemoryTenantStore, KeyPeopleDirectory } from './testing/in-memory-tenant-store';

/** A tenant's members as the meta database keeps them: what keys are checked against. */
class Members implements KeyPeopleDirectory {
  readonly rows = new Map<string, KeyPerson & { tenantId: string }>();
  add(tenantId: string, role: Role): KeyPerson {
    const id = randomUUID();
    const person = { id, email: `${role}-${id.slice(0, 6)}@example.com`, role };
    this.rows.set(id, { ...person, tenantId });
    return person;
  }
  person(tenantId: string, memberId: string): KeyPerson | null {
    const row = this.rows.get(memberId);
    return row && row.tenantId === tenantId ? { id: row.id, email: row.email, role: row.role } : null;
  }
  hasActiveOwner(tenantId: string): boolean {
    return [...this.rows.values()].some((r) => r.tenantId === tenantId && r.role === 'owner');
  }
}

/** A person signed in, as the people domain's `principalOf` makes it. */
const session = (tenantId: string, p: KeyPerson): Principal => ({
  tenantId,
  keyId: p.id,
  scopes: ROLE_SCOPES[p.role],
  plan: 'paid',
  actor: { kind: 'person', id: p.id, name: p.email, email: p.email, tenantId, role: p.role },
});

async function setUp() {
  const store = new InMemoryTenantStore();
  const members = new Members();
  store.people = members;
  const tenants = new TenantService(store);
  const keys = new ApiKeyService(store);
  const verifier = new ApiKeyVerifier(store, { cacheMs: 0 });
  const { tenant, issued } = await tenants.createTenant({ name: 'acme', plan: 'paid' });
  return { store, members, keys, verifier, tenantId: tenant.id, first: issued };
}

describe('who may do what: keys within their person’s role (docs/design.md, "Security model")', () => {
  it('bounds a key by the role of its person now; suspends it without one; lets a key of no person do everything only until the tenant has an owner', () => {
    const all = { scopes: SCOPES.filter((s) => s !== 'admin'), memberId: 'm', person: null };
    expect(keyStanding(all, false)).toEqual({ suspended: true });
    for (const role of ['owner', 'admin', 'editor', 'viewer'] as const)
      expect(keyStanding({ ...all, person: { id: 'm', email: 'x@example.com', role } }, true)).toEqual({ suspended: false, scopes: KEY_CEILING[role] });
    expect(KEY_CEILING.admin).not.toContain('members:write');
    expect(KEY_CEILING.owner).toContain('members:write');
    const first = { ...all, memberId: null };
    expect(keyStanding(first, false)).toEqual({ suspended: false, scopes: first.scopes });
    expect(keyStanding(first, true)).toEqual({ suspended: false, scopes: ['links:read', 'links:write', 'analytics:read', 'audit:read', 'conversions:write'] });
    // The operator's key (admin) is not bound by a tenant's people.
    expect(keyStanding({ ...first, scopes: SCOPES }, true)).toEqual({ suspended: false, scopes: SCOPES });
  });

  it('lets a person manage keys it may: its own; an owner any; an admin those of members it manages and suspended ones, never an owner’s or the first key', () => {
    const key = (role: Role | null, memberId: string | null = role ? `m-${role}` : null) => ({
      memberId,
      person: role && memberId ? { id: memberId, email: `${role}@example.com`, role } : null,
    });
    const as = (role: Role, memberId = `me-${role}`) => ({ kind: 'person' as const, memberId, role });
    for (const target of [key('owner'), key('admin'), key('editor'), key(null), key(null, 'gone')]) expect(mayManageKey(as('owner'), target)).toBe(true);
    expect(mayManageKey(as('admin'), key('owner'))).toBe(false);
    expect(mayManageKey(as('admin'), key(null))).toBe(false); // the tenant's first key is owner-level
    expect(mayManageKey(as('admin'), key('editor'))).toBe(true);
    expect(mayManageKey(as('admin'), key(null, 'gone'))).toBe(true); // suspended: its person is gone
    expect(mayManageKey(as('editor'), key('editor'))).toBe(false); // another editor's CI key
    expect(mayManageKey(as('editor', 'm-editor'), key('editor'))).toBe(true); // its own
    expect(mayManageKey(as('viewer'), key(null, 'gone'))).toBe(false);
    expect(mayManageKey({ kind: 'key' }, key('owner'))).toBe(true);
    expect(mayManageRole(as('admin'), 'owner')).toBe(false);
    expect(mayManageRole(as('admin'), 'admin')).toBe(true);
  });

  it('makes a key act for its maker: a session’s person, or the person of the key that made it', async () => {
    const { members, keys, verifier, tenantId } = await setUp();
    const admin = members.add(tenantId, 'admin');
    const made = await keys.createKey(session(tenantId, admin), { name: 'x' });
    expect(made.key).toMatchObject({
      memberId: admin.id,
      person: admin,
      scopes: ['links:read', 'links:write', 'analytics:read', 'audit:read', 'keys:write', 'conversions:write'],
    });
    const byKey = await verifier.verify(made.apiKey);
    expect(byKey.actor).toMatchObject({ kind: 'key', person: admin });
    expect(managerOf(byKey)).toEqual({ kind: 'person', memberId: admin.id, role: 'admin' });
    const child = await keys.createKey(byKey, { name: 'child', scopes: ['links:read'] });
    expect(child.key).toMatchObject({ memberId: admin.id, person: admin });
  });

  it('never gives a key more than its maker may: members:write only from an owner signed in', async () => {
    const { members, keys, verifier, tenantId, first } = await setUp();
    const admin = members.add(tenantId, 'admin');
    const owner = members.add(tenantId, 'owner');
    const editor = members.add(tenantId, 'editor');
    await expect(keys.createKey(session(tenantId, admin), { name: 'x', scopes: ['members:write'] })).rejects.toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
      details: { scopes: ['members:write'] },
    });
    await expect(keys.createKey(session(tenantId, editor), { name: 'x', scopes: ['audit:read'] })).rejects.toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
    const ownerKey = await keys.createKey(session(tenantId, owner), { name: 'owner ci', scopes: ['members:write', 'keys:write', 'links:read'] });
    expect(ownerKey.key.scopes).toEqual(['members:write', 'keys:write', 'links:read']);
    // The owner's key does member changes as the owner, but does not mint owner-level keys itself.
    const asOwnerKey = await verifier.verify(ownerKey.apiKey);
    expect(asOwnerKey.scopes).toContain('members:write');
    await expect(keys.createKey(asOwnerKey, { name: 'copy', scopes: ['members:write'] })).rejects.toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
    expect((await keys.createKey(asOwnerKey, { name: 'default' })).key.scopes).toEqual(['links:read', 'keys:write']);
    // Nor does the first key, which acts for no person.
    await expect(keys.createKey(await verifier.verify(first.apiKey), { name: 'x', scopes: ['members:write'] })).rejects.toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
    });
  });

  it('lowers a key with its person’s demotion, and suspends it when the person is removed, until an owner hands it over', async () => {
    const { store, members, keys, verifier, tenantId } = await setUp();
    const owner = members.add(tenantId, 'owner');
    const editor = members.add(tenantId, 'editor');
    const ci = await keys.createKey(session(tenantId, editor), { name: 'ci' });
    expect((await verifier.verify(ci.apiKey)).scopes).toEqual(['links:read', 'links:write', 'analytics:read', 'keys:write', 'conversions:write']);
    members.rows.set(editor.id, { ...members.rows.get(editor.id)!, role: 'viewer' });
    expect((await verifier.verify(ci.apiKey)).scopes).toEqual(['links:read', 'analytics:read']);
    members.rows.delete(editor.id);
    await expect(verifier.verify(ci.apiKey)).rejects.toMatchObject({ code: 'KEY_SUSPENDED', details: { keyId: ci.key.id } });
    expect((await keys.listKeys(tenantId)).find((k) => k.key.id === ci.key.id)).toMatchObject({
      key: { memberId: editor.id, person: null },
      standing: { suspended: true },
    });
    // Only an owner hands it over, to an active member; from then on it acts for them.
    const admin = members.add(tenantId, 'admin');
    await expect(keys.transferKey(session(tenantId, admin), ci.key.id, admin.id)).rejects.toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
    await expect(keys.transferKey(session(tenantId, owner), ci.key.id, editor.id)).rejects.toMatchObject({ code: 'MEMBER_NOT_FOUND' });
    const moved = await keys.transferKey(session(tenantId, owner), ci.key.id, admin.id, {
      actor: { type: 'person', id: owner.id, name: owner.email },
      clientAddress: null,
    });
    expect(moved).toMatchObject({ key: { memberId: admin.id, person: admin }, standing: { suspended: false } });
    expect((await verifier.verify(ci.apiKey)).actor).toMatchObject({ person: admin });
    expect(store.audit.entries.at(-1)).toMatchObject({
      action: 'key.transferred',
      target: { type: 'key', id: ci.key.id },
      changes: { actsFor: { from: { id: editor.id, email: null }, to: { id: admin.id, email: admin.email } } },
    });
  });

  it('lets the first key do what an owner does only while the tenant has no owner: it invites the first one, then keeps data scopes', async () => {
    const { members, keys, verifier, tenantId, first } = await setUp();
    const before = await verifier.verify(first.apiKey);
    expect(before.scopes).toEqual(['links:read', 'links:write', 'analytics:read', 'audit:read', 'members:write', 'keys:write', 'conversions:write']);
    expect(managerOf(before)).toEqual({ kind: 'key' });
    // Its replacement, made before the tenant has people, keeps the way to invite the first owner and can revoke it.
    const replacement = await keys.createKey(before, { name: 'replacement' });
    expect(replacement.key).toMatchObject({ memberId: null, scopes: expect.arrayContaining(['members:write', 'keys:write']) });
    await keys.revokeKey(await verifier.verify(replacement.apiKey), replacement.key.id);
    const owner = members.add(tenantId, 'owner');
    expect((await verifier.verify(first.apiKey)).scopes).toEqual(['links:read', 'links:write', 'analytics:read', 'audit:read', 'conversions:write']);
    // The owner adopts it: it acts for the owner, within the owner's role.
    await keys.transferKey(session(tenantId, owner), first.key.id, owner.id);
    expect((await verifier.verify(first.apiKey)).scopes).toEqual([
      'links:read',
      'links:write',
      'analytics:read',
      'audit:read',
      'members:write',
      'keys:write',
      'conversions:write',
    ]);
  });

  it('revokes only keys the caller may manage: an admin not an owner’s key nor the first key, an editor not another’s key', async () => {
    const { members, keys, tenantId, first } = await setUp();
    const owner = members.add(tenantId, 'owner');
    const admin = members.add(tenantId, 'admin');
    const editor = members.add(tenantId, 'editor');
    const other = members.add(tenantId, 'editor');
    const ownerKey = await keys.createKey(session(tenantId, owner), { name: 'owner key' });
    const ci = await keys.createKey(session(tenantId, other), { name: 'ci' });
    const mine = await keys.createKey(session(tenantId, editor), { name: 'mine' });
    for (const target of [ownerKey.key.id, first.key.id])
      await expect(keys.revokeKey(session(tenantId, admin), target)).rejects.toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
    await expect(keys.revokeKey(session(tenantId, editor), ci.key.id)).rejects.toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
    await keys.revokeKey(session(tenantId, editor), mine.key.id);
    await keys.revokeKey(session(tenantId, admin), ci.key.id);
    await keys.revokeKey(session(tenantId, owner), first.key.id);
    const revoked = (await keys.listKeys(tenantId)).filter((k) => k.key.revokedAt !== null).map((k) => k.key.name);
    expect(revoked.sort()).toEqual(['ci', 'first key', 'mine']);
  });
});
