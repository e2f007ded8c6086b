import { hash } from '@node-rs/argon2';
import { checkPasswordHash, PASSWORD_HASH_BOUNDS } from '@shortlink/links-domain';
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

  it('verifies every hash an import may bring (checkPasswordHash), its own and those at the bounds', async () => {
    const b = PASSWORD_HASH_BOUNDS;
    const hashes = [
      await hasher.hash('open sesame'),
      await hash('open sesame', { memoryCost: b.maxMemoryKiB, timeCost: Math.floor(b.maxWork / b.maxMemoryKiB), parallelism: b.maxLanes }),
      await hash('open sesame', { memoryCost: 8 * b.maxLanes, timeCost: b.maxPasses, parallelism: b.maxLanes, outputLen: 16 }),
      await hash('open sesame', { memoryCost: 19_456, timeCost: 2, parallelism: 1, outputLen: 64, salt: new Uint8Array(64).fill(7) }),
    ];
    for (const h of hashes) {
      expect(checkPasswordHash(h)).toBe(h);
      expect(await hasher.verify(h, 'open sesame')).toBe(true);
      expect(await hasher.verify(h, 'open sesame!')).toBe(false);
    }
  });
});
