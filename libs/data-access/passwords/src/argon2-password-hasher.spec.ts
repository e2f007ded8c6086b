import { Argon2PasswordHasher } from './argon2-password-hasher';

describe('Argon2PasswordHasher', () => {
  const hasher = new Argon2PasswordHasher();

  it('stores argon2id hashes that verify the right password only, salted per hash', async () => {
    const a = await hasher.hash('correct horse');
    const b = await hasher.hash('correct horse');
    expect(a).toMatch(/^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$/);
    expect(a).not.toBe(b);
    expect(await hasher.verify(a, 'correct horse')).toBe(true);
    expect(await hasher.verify(a, 'Correct horse')).toBe(false);
    expect(await hasher.verify('not-a-hash', 'correct horse')).toBe(false);
  });
});
