import { PASSWORD_HASHER } from '@shortlink/links-domain';
import { Argon2PasswordHasher } from '@shortlink/passwords';
import { itself, portSpec } from '../port';

/** Link passwords: argon2id on both profiles (no server behind it). */
export const passwordsPort = portSpec({
  name: 'passwords',
  open: () => new Argon2PasswordHasher(),
  provides: [[PASSWORD_HASHER, itself]],
});
