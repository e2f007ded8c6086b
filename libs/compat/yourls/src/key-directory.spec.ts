import { randomUUID } from 'crypto';
import { DomainError, ErrorCode } from '@shortlink/core';
import { InMemoryTenantStore } from '@shortlink/tenants-domain/testing';
import { KeyDirectory } from './key-directory';

async function setUp() {
  const store = new InMemoryTenantStore();
  const tenant = { id: randomUUID(), name: 'acme', plan: 'paid' as const, status: 'active' as const, createdAt: new Date() };
  const key = { id: randomUUID(), name: 'ci', prefix: 'sl_abcd', scopes: ['links:read' as const], expiresAt: null, person: null };
  await store.createWithApiKey(tenant, 'hash-1', key);
  return { store, tenant, key };
}

const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    return (e as DomainError).code;
  }
  return null;
};

describe('KeyDirectory', () => {
  it('answers the principal of an active key, as the API key verifier would', async () => {
    const { store, tenant, key } = await setUp();
    expect(await new KeyDirectory(store).principalOf({ tenantId: tenant.id, keyId: key.id })).toEqual({
      tenantId: tenant.id,
      keyId: key.id,
      scopes: ['links:read'],
      plan: 'paid',
      actor: { kind: 'key', id: key.id, name: 'ci', tenantId: tenant.id, person: null },
    });
  });

  it('refuses an unknown key, another tenant’s key, a revoked key (after its cache time) and a suspended tenant', async () => {
    const { store, tenant, key } = await setUp();
    const directory = new KeyDirectory(store, 0);
    expect(await codeOf(directory.principalOf({ tenantId: tenant.id, keyId: randomUUID() }))).toBe(ErrorCode.UNAUTHENTICATED);
    expect(await codeOf(directory.principalOf({ tenantId: randomUUID(), keyId: key.id }))).toBe(ErrorCode.UNAUTHENTICATED);
    await store.updateTenant(tenant.id, { status: 'suspended' });
    expect(await codeOf(directory.principalOf({ tenantId: tenant.id, keyId: key.id }))).toBe(ErrorCode.TENANT_SUSPENDED);
    await store.updateTenant(tenant.id, { status: 'active' });
    await store.revokeKey(tenant.id, key.id, new Date());
    expect(await codeOf(directory.principalOf({ tenantId: tenant.id, keyId: key.id }))).toBe(ErrorCode.UNAUTHENTICATED);
  });

  it('trusts an answer for its cache time only, and says DEPENDENCY_UNAVAILABLE when the store fails', async () => {
    const { store, tenant, key } = await setUp();
    const directory = new KeyDirectory(store, 1000);
    await directory.principalOf({ tenantId: tenant.id, keyId: key.id });
    await store.revokeKey(tenant.id, key.id, new Date());
    expect(await codeOf(directory.principalOf({ tenantId: tenant.id, keyId: key.id }))).toBeNull(); // cached
    const failing = new KeyDirectory({
      ...store,
      listKeys: () => Promise.reject(new Error('down')),
      findTenant: () => Promise.reject(new Error('down')),
    } as never);
    expect(await codeOf(failing.principalOf({ tenantId: tenant.id, keyId: key.id }))).toBe(ErrorCode.DEPENDENCY_UNAVAILABLE);
  });
});
