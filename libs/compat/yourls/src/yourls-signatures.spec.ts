import { createHash } from 'crypto';
import { TIMESTAMP_SKEW_SECONDS, YourlsSignatures } from './yourls-signatures';

const user = { tenantId: '95743756-def9-4b8d-9907-473a58ce5737', keyId: '9239cb84-f1be-4e34-bcc5-507fe622f106' };
const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const NOW = 1_765_000_000_000;

describe('YourlsSignatures', () => {
  const signatures = new YourlsSignatures('a-code-secret-of-at-least-32-characters!!');
  const token = signatures.tokenOf(user);

  it('issues a token naming the key that only this secret verifies', () => {
    expect(token.startsWith(`${user.tenantId}.${user.keyId}.`)).toBe(true);
    expect(signatures.verify(token)).toEqual(user);
    expect(new YourlsSignatures('another-code-secret-of-32-characters!!!').verify(token)).toBeNull();
  });

  it('refuses a token whose MAC or user was changed, and what is not a token', () => {
    const other = { ...user, keyId: '00000000-0000-4000-8000-000000000000' };
    const mac = token.slice(token.lastIndexOf('.') + 1);
    expect(signatures.verify(`${YourlsSignatures.usernameOf(other)}.${mac}`)).toBeNull();
    expect(signatures.verify(`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`)).toBeNull();
    for (const bad of [undefined, 42, '', 'abc', `${token}.x`, token.slice(0, -3), 'x'.repeat(300)]) expect(signatures.verify(bad)).toBeNull();
  });

  it('maps usernames both ways and refuses what is not two ids', () => {
    expect(YourlsSignatures.userOf(YourlsSignatures.usernameOf(user))).toEqual(user);
    for (const bad of ['admin', `${user.tenantId}`, `${user.tenantId}.${user.keyId}.x`, `${user.tenantId}.not-an-id`, null])
      expect(YourlsSignatures.userOf(bad)).toBeNull();
  });

  it('accepts a time-limited md5(timestamp + token), and the reverse order, within ±15 minutes', () => {
    const username = YourlsSignatures.usernameOf(user);
    const ts = String(Math.floor(NOW / 1000));
    expect(signatures.verifyTimed({ username, timestamp: ts, signature: md5(ts + token) }, NOW)).toEqual(user);
    expect(signatures.verifyTimed({ username, timestamp: ts, signature: md5(token + ts).toUpperCase() }, NOW)).toEqual(user);
    const edge = String(Math.floor(NOW / 1000) - TIMESTAMP_SKEW_SECONDS);
    expect(signatures.verifyTimed({ username, timestamp: edge, signature: md5(edge + token) }, NOW)).toEqual(user);
    const stale = String(Math.floor(NOW / 1000) - TIMESTAMP_SKEW_SECONDS - 1);
    expect(signatures.verifyTimed({ username, timestamp: stale, signature: md5(stale + token) }, NOW)).toBe('expired');
    const future = String(Math.floor(NOW / 1000) + TIMESTAMP_SKEW_SECONDS + 1);
    expect(signatures.verifyTimed({ username, timestamp: future, signature: md5(future + token) }, NOW)).toBe('expired');
  });

  it('takes the hash named by `hash` and refuses unknown ones, wrong users and wrong digests', () => {
    const username = YourlsSignatures.usernameOf(user);
    const ts = String(Math.floor(NOW / 1000));
    for (const hash of ['sha1', 'sha256', 'sha512']) {
      const signature = createHash(hash)
        .update(ts + token)
        .digest('hex');
      expect(signatures.verifyTimed({ username, timestamp: ts, signature, hash }, NOW)).toEqual(user);
      expect(signatures.verifyTimed({ username, timestamp: ts, signature }, NOW)).toBeNull(); // read as md5
    }
    expect(signatures.verifyTimed({ username, timestamp: ts, signature: md5(ts + token), hash: 'crc32' }, NOW)).toBe('unknown-hash');
    const other = YourlsSignatures.usernameOf({ ...user, keyId: '00000000-0000-4000-8000-000000000000' });
    expect(signatures.verifyTimed({ username: other, timestamp: ts, signature: md5(ts + token) }, NOW)).toBeNull();
    expect(signatures.verifyTimed({ username, timestamp: ts, signature: md5(ts + token + 'x') }, NOW)).toBeNull();
    expect(signatures.verifyTimed({ username, timestamp: '12.5', signature: md5(ts + token) }, NOW)).toBeNull();
    expect(signatures.verifyTimed({ username: undefined, timestamp: ts, signature: md5(ts + token) }, NOW)).toBeNull();
  });
});
