import { randomBytes } from 'crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'fs';
import { dirname } from 'path';
import { SecretSource } from '@shortlink/config';

/**
 * The value of a secret: the one given in the environment, or the one kept in the data directory
 * (created on first start from 32 random bytes, file mode 0600, directory 0700). Two processes
 * starting at once agree: the file is created exclusively, and the loser reads the winner's.
 */
export function resolveSecret(source: SecretSource): string {
  if ('given' in source) return source.given;
  const file = source.file;
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(file, randomBytes(32).toString('base64url') + '\n', { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  // A copy restored with a looser mode is tightened rather than refused.
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  const value = readFileSync(file, 'utf8').trim();
  if (value.length < 32)
    throw new Error(
      `the secret in ${file} is shorter than 32 characters: restore it from a backup (codes of new links depend on it) or delete it to start over`,
    );
  return value;
}
