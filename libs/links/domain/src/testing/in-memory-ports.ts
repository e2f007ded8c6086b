import { Link, ShortUrlIdentifier } from '../link';
import { LinkCacheWriter, LinkChange, LinkChangeFeed, PasswordHasher } from '../ports';

export class RecordingChangeFeed implements LinkChangeFeed {
  readonly published: LinkChange[] = [];
  down = false;
  async publish(change: LinkChange) {
    if (this.down) throw new Error('channel down');
    this.published.push(change);
  }
  async subscribe() {
    return async () => undefined;
  }
  async close() {}
}

/** Not a hash: lets the domain's tests see what would be checked, without argon2's cost. */
export const plainPasswords: PasswordHasher = {
  hash: async (password) => `plain:${password}`,
  verify: async (hash, password) => hash === `plain:${password}`,
};

/** What the links domain tells the read path's caches, recorded (the read path's own tests check the caches themselves). */
export class RecordingLinkCache implements LinkCacheWriter {
  /** Links told as created, in order. */
  readonly newLinks: Link[] = [];
  /** The last value told per `domain/code`: the link, or its deletion. */
  readonly values = new Map<string, Link | { gone: true; version: number }>();
  /** `updated` and `deleted` fail while down (the cache is unreachable); `created` never does. */
  down = false;

  async created(links: readonly Link[]) {
    this.newLinks.push(...links);
  }

  async updated(link: Link) {
    if (this.down) throw new Error('cache down');
    this.values.set(`${link.domain}/${link.code}`, link);
  }

  async deleted(id: ShortUrlIdentifier, version: number) {
    if (this.down) throw new Error('cache down');
    this.values.set(`${id.domain}/${id.code}`, { gone: true, version });
  }

  /** `domain/code` of every link forgotten, in order. */
  readonly forgotten: string[] = [];

  async forget(id: ShortUrlIdentifier) {
    if (this.down) throw new Error('cache down');
    this.forgotten.push(`${id.domain}/${id.code}`);
    this.values.delete(`${id.domain}/${id.code}`);
  }
}
