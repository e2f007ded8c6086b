import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { DnsHostResolver } from './dns-host-resolver';
import { FileDomainBlockList, parseBlockList } from './file-domain-block-list';

describe('FileDomainBlockList', () => {
  it('reads one domain per line with comments, normalised to punycode, and covers subdomains', () => {
    const dir = mkdtempSync(join(tmpdir(), 'blocklist-'));
    const file = join(dir, 'blocked.txt');
    writeFileSync(file, '# phishing\nEvil.Example\n\n  bücher.example  # idn\n');
    const list = new FileDomainBlockList(file);
    expect(list.blocking('evil.example')).toBe('evil.example');
    expect(list.blocking('shop.evil.example')).toBe('evil.example');
    expect(list.blocking('notevil.example')).toBeNull();
    expect(list.blocking('xn--bcher-kva.example')).toBe('xn--bcher-kva.example');
    list.replaceAdded(['added.example']);
    expect(list.blocking('a.added.example')).toBe('added.example');
    expect(list.size).toBe(3);
    rmSync(dir, { recursive: true, force: true });
  });

  it('parses an empty list', () => {
    expect(parseBlockList('# nothing\n\n')).toEqual([]);
    expect(new FileDomainBlockList(null).blocking('example.com')).toBeNull();
  });
});

describe('DnsHostResolver', () => {
  it('resolves a name the machine knows, and fails a name that does not exist', async () => {
    const resolver = new DnsHostResolver(2000);
    expect(await resolver.addresses('localhost')).toEqual(expect.arrayContaining([expect.stringMatching(/^(127\.0\.0\.1|::1)$/)]));
    await expect(resolver.addresses('no-such-host.invalid')).rejects.toThrow();
  });
});
