import { checkLegacyCode, isPlausibleCode, isReservedCode } from './alias';
import { SegmentIdAllocator } from './segment-id-allocator';
import { SequenceCodeStrategy } from '@shortlink/link-codes';
import { checkPasswordHash, PASSWORD_HASH_BOUNDS } from './link-options';
import { LinkService } from './link-service';
import { IdBlock } from './ports';
import { InMemoryLinkRepository } from './testing/in-memory-link-repository';
import { plainPasswords, RecordingChangeFeed, RecordingLinkCache } from './testing/in-memory-ports';
import { relayOver } from './testing/relay';
import { UrlPolicy } from '@shortlink/url-policy';

/** An argon2id hash as the server's hasher writes it (salt and hash are base64 of 16 and 32 bytes). */
const HASH = '$argon2id$v=19$m=19456,t=2,p=1$kPz9lTNFOj4fNxFC07jJVg$juGUykihyVcY60YaP3b2e9wTBBbO9TycP9ZVrYOreeI';
const phc = (params: string) => `$argon2id$v=19$${params}$kPz9lTNFOj4fNxFC07jJVg$juGUykihyVcY60YaP3b2e9wTBBbO9TycP9ZVrYOreeI`;

/** What an import carries over (docs/design.md, "Import and export"): legacy codes, status, password hashes. */
describe('LinkService: creates that carry a link over from an export', () => {
  const setup = () => {
    let next = 1n;
    const sequence = { allocateBlock: async (_: string, size: number): Promise<IdBlock> => ({ start: next, end: (next += BigInt(size)) }) };
    const repo = new InMemoryLinkRepository();
    return new LinkService(
      {
        links: repo,
        ids: new SegmentIdAllocator(sequence, 'links', 10),
        codes: new SequenceCodeStrategy('secret'),
        events: relayOver(repo, new RecordingLinkCache(), new RecordingChangeFeed()),
        passwords: plainPasswords,
        urls: new UrlPolicy({ shortDomains: ['sho.rt'] }),
      },
      { defaultDomain: 'sho.rt', sharedDomains: ['sho.rt'], retireForMs: 86_400_000 },
    );
  };

  it('keeps a disabled link disabled, with or without other options', async () => {
    const service = setup();
    expect((await service.create({ tenantId: 't1', url: 'https://example.com/a', status: 'disabled' })).status).toBe('disabled');
    expect((await service.create({ tenantId: 't1', url: 'https://example.com/b', status: 'disabled', title: 'Old' })).status).toBe('disabled');
    expect((await service.create({ tenantId: 't1', url: 'https://example.com/c', status: 'active' })).status).toBe('active');
    await expect(service.create({ tenantId: 't1', url: 'https://example.com/d', status: 'expired' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { field: 'status' },
    });
  });

  it('stores a password hash as given, never hashing it again, and refuses it beside a password', async () => {
    const service = setup();
    const link = await service.create({ tenantId: 't1', url: 'https://example.com/a', passwordHash: HASH });
    expect(link.passwordHash).toBe(HASH);
    await expect(service.create({ tenantId: 't1', url: 'https://example.com/b', passwordHash: HASH, password: 'hunter22' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { field: 'passwordHash' },
    });
  });

  it('refuses anything but a bounded argon2id PHC string as a password hash, without echoing it', () => {
    expect(checkPasswordHash(HASH)).toBe(HASH);
    expect(checkPasswordHash(phc('m=65536,t=2,p=4'))).toBeTruthy();
    expect(checkPasswordHash(null)).toBeNull();
    const refused = [
      'hunter22',
      `${HASH}x!`,
      HASH.replace('argon2id', 'argon2i'),
      HASH.replace('v=19', 'v=16'),
      '$2b$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234',
      phc('m=19456,t=2,p=1,keyid=abc'),
      HASH.replace(/\$[^$]+$/, '$short'),
      42,
      phc('m=4194304,t=1,p=1'),
      phc('m=65536,t=3,p=1'),
      phc('m=19456,t=11,p=1'),
      phc('m=19456,t=2,p=8'),
      phc('m=16,t=2,p=4'),
    ];
    for (const value of refused) {
      let error: unknown;
      try {
        checkPasswordHash(value);
      } catch (e) {
        error = e;
      }
      expect(error).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'passwordHash' } });
      expect(JSON.stringify([(error as Error).message, (error as { details: unknown }).details])).not.toMatch(/kPz9lTNFOj4fNxFC07jJVg|hunter22|abcdefghij/);
    }
    expect(65_536 * 2).toBeLessThanOrEqual(PASSWORD_HASH_BOUNDS.maxWork);
  });

  it('keeps legacy codes of 1-2 characters and with segments, on the full and the option-less path alike; the alias rule stays', async () => {
    const service = setup();
    for (const legacyCode of ['1', 'zz', 'blog/2024/launch', 'A_b-9/x']) {
      const link = await service.create({ tenantId: 't1', url: `https://example.com/${legacyCode}`, legacyCode });
      expect(link.code).toBe(legacyCode);
      expect(isPlausibleCode(link.code)).toBe(true);
    }
    // A row without options (the batch's usual row) takes the fast path: the legacy code is kept there too.
    expect((await service.prepare({ tenantId: 't1', url: 'https://example.com/x', legacyCode: 'q' })).alias).toBe('q');
    expect((await service.prepare({ tenantId: 't1', url: 'https://example.com/x', legacyCode: 'q', title: 'T' })).alias).toBe('q');
    await expect(service.create({ tenantId: 't1', url: 'https://example.com/again', legacyCode: 'zz' })).rejects.toMatchObject({ code: 'ALIAS_TAKEN' });
    await expect(service.create({ tenantId: 't1', url: 'https://example.com/x', alias: 'zz' })).rejects.toMatchObject({
      code: 'INVALID_ALIAS',
      details: { field: 'alias' },
    });
    await expect(service.create({ tenantId: 't1', url: 'https://example.com/x', alias: 'blog/x' })).rejects.toMatchObject({ code: 'INVALID_ALIAS' });
    await expect(service.create({ tenantId: 't1', url: 'https://example.com/x', alias: 'kept-1', legacyCode: 'kept-1' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
  });

  it('refuses legacy codes that are not that shape, that end in a "go" segment, or whose first segment is one of our paths', () => {
    for (const code of ['', 'a'.repeat(65), '/a', 'a/', 'a//b', '-a', 'a/-b', 'a b', 'a.b', 'ä', 'blog/go', 42]) {
      expect(() => checkLegacyCode(code)).toThrow(expect.objectContaining({ code: 'INVALID_ALIAS', details: { field: 'legacyCode' } }));
    }
    for (const code of ['health', 'docs/openapi', 'API/v1/links', 'batch', 'metrics/x']) {
      expect(() => checkLegacyCode(code)).toThrow(expect.objectContaining({ code: 'ALIAS_RESERVED' }));
      expect(isReservedCode(code)).toBe(true);
    }
    expect(checkLegacyCode('a'.repeat(64))).toHaveLength(64);
    expect(checkLegacyCode('go')).toBe('go');
    expect(checkLegacyCode('blog/go-live')).toBe('blog/go-live');
    expect(isReservedCode('blog/health')).toBe(false);
  });
});
