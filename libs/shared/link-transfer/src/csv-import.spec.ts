import { importKey } from './csv-import';

describe('importKey', () => {
  const sha = 'a'.repeat(64);
  const keep = { keepCodes: true, keepDomains: false };

  it('is the same for the same file read the same way, so a retry creates nothing twice', () => {
    expect(importKey(sha, 'yourls', keep)).toBe(importKey(sha, 'yourls', { ...keep }));
    expect(importKey(sha, 'yourls', keep)).toMatch(/^import-[0-9a-f]{40}$/);
  });

  it('differs when a flag changes the rows (--no-codes, --keep-domains, --format) or the file does', () => {
    const keys = [
      importKey(sha, 'yourls', keep),
      importKey(sha, 'yourls', { keepCodes: false, keepDomains: false }),
      importKey(sha, 'yourls', { keepCodes: true, keepDomains: true }),
      importKey(sha, 'shortlink', keep),
      importKey('b'.repeat(64), 'yourls', keep),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });
});
