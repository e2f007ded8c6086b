import { hash, verify } from '@node-rs/argon2';
import { PasswordHasher } from '@shortlink/links-domain';

/**
 * Link passwords as argon2id hashes (@node-rs/argon2, native). The library's defaults follow
 * OWASP's minimum for argon2id (19 MiB, 2 iterations, 1 lane): ~50 ms of one core per hash or check,
 * which is what makes guessing expensive, and why wrong attempts are also rate limited.
 */
export class Argon2PasswordHasher implements PasswordHasher {
  hash(password: string): Promise<string> {
    return hash(password);
  }

  async verify(passwordHash: string, password: string): Promise<boolean> {
    try {
      return await verify(passwordHash, password);
    } catch {
      return false; // a malformed stored hash never lets anyone in
    }
  }
}
