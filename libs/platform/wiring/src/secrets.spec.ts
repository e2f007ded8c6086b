import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, chmodSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { resolveSecret } from './secrets';

describe('resolveSecret', () => {
  const dirs: string[] = [];
  const fresh = () => {
    const d = mkdtempSync(join(tmpdir(), 'shortlink-secret-'));
    dirs.push(d);
    return d;
  };
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('returns a given secret as it is', () => {
    expect(resolveSecret({ given: 'x'.repeat(40) })).toBe('x'.repeat(40));
  });

  it('creates 32 random bytes in a 0600 file on first use and reuses them after', () => {
    const file = join(fresh(), 'secrets', 'code-secret');
    const first = resolveSecret({ file });
    expect(Buffer.from(first, 'base64url')).toHaveLength(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(file, '..')).mode & 0o777).toBe(0o700);
    expect(resolveSecret({ file })).toBe(first);
    expect(readFileSync(file, 'utf8').trim()).toBe(first);
  });

  it('gives two data directories unrelated secrets', () => {
    expect(resolveSecret({ file: join(fresh(), 's') })).not.toBe(resolveSecret({ file: join(fresh(), 's') }));
  });

  it('tightens a file restored with a looser mode, and refuses a truncated one', () => {
    const file = join(fresh(), 's');
    writeFileSync(file, 'a'.repeat(43));
    chmodSync(file, 0o644);
    expect(resolveSecret({ file })).toBe('a'.repeat(43));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    writeFileSync(file, 'short');
    expect(() => resolveSecret({ file })).toThrow(/shorter than 32/);
  });
});
