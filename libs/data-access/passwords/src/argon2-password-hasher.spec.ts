import { checkPasswordHash, PASSWORD_HASH_BOUNDS } from '@shortlink/links-domain';
import { Argon2PasswordHasher } from './argon2-password-hasher';

/**
 * Real argon2id work, which is slow by design: two hashes and three checks at 19 MiB (~50 ms of one core each), then a
 * check at the bounds' most work (64 MiB, 2 passes, 4 lanes: ~0.5 s of one core). About 1 s of CPU in all, given 60 s:
 * the work sets the timeout, not the machine's speed (under a CPU hog on both cores jest's 5 s was not enough).
 */
jest.setTimeout(60_000);

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

  /**
   * Hashes of 'open sesame' at the bounds an import may bring (PASSWORD_HASH_BOUNDS), made once with fixed salts by
   * @node-rs/argon2's `hash`: the most work (64 MiB, 2 passes, 4 lanes), the most passes over the least memory, and a
   * 64-byte salt and output. Computing them in the test (the most work twice over) is what took it past jest's 5 s on a
   * busy machine; verifying each once is what the test is about.
   */
  const AT_THE_BOUNDS = [
    '$argon2id$v=19$m=65536,t=2,p=4$AQEBAQEBAQEBAQEBAQEBAQ$0rcZEju74z7H9nKAwycXL9ikrdoCI1Mvp32D3baJvvY',
    '$argon2id$v=19$m=32,t=10,p=4$AgICAgICAgICAgICAgICAg$/Ops/g1glVjMBSJoDVkyAw',
    '$argon2id$v=19$m=19456,t=2,p=1$BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBw$92SwB6pOoP4XMs/3ZmDe0Oou0NlHVo99V/qTZnurtMu6kU79Srg+BBTVnDzDlP9x+gb08ehoo0DaIMigfu3ApQ',
  ];

  it('verifies every hash an import may bring (checkPasswordHash), its own and those at the bounds', async () => {
    const b = PASSWORD_HASH_BOUNDS;
    expect(AT_THE_BOUNDS.map((h) => /m=(\d+),t=(\d+),p=(\d+)/.exec(h)!.slice(1).map(Number))).toEqual([
      [b.maxMemoryKiB, Math.floor(b.maxWork / b.maxMemoryKiB), b.maxLanes],
      [8 * b.maxLanes, b.maxPasses, b.maxLanes],
      [19_456, 2, 1],
    ]);
    const own = await hasher.hash('open sesame');
    for (const h of [own, ...AT_THE_BOUNDS]) {
      expect(checkPasswordHash(h)).toBe(h);
      expect(await hasher.verify(h, 'open sesame')).toBe(true);
    }
    // A wrong password against the cheapest of them (the first test checks the hasher's own): the same verification.
    expect(await hasher.verify(AT_THE_BOUNDS[1], 'open sesame!')).toBe(false);
  });
});
