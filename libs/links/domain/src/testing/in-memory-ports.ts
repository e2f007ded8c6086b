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
  async heartbeat() {}
  async close() {}
}

/** Not a hash: lets the domain's tests see what would be checked, without argon2's cost. */
export const plainPasswords: PasswordHasher = {
  hash: async (password) => `plain:${password}`,
  verify: async (hash, password) => hash === `plain:${password}`,
};

/**
 * What the links domain tells the read path's caches, recorded and kept by the cache's own rules (a
 * value never replaces a newer version; the read path's own tests check the real caches).
 */
export class RecordingLinkCache implements LinkCacheWriter {
  /** Identifiers told as created, in order. */
  readonly newLinks: ShortUrlIdentifier[] = [];
  /** What the cache holds per `domain/code`: the link, or its deletion. */
  readonly values = new Map<string, Link | { gone: true; version: number }>();
  /** Every call fails while down (the cache is unreachable). */
  down = false;
  /**
   * Writes acknowledged but not kept while set (a Redis master that took them, then lost its role):
   * each answers as written and changes nothing.
   */
  losing = false;

  async created(ids: readonly ShortUrlIdentifier[]) {
    if (this.down) throw new Error('cache down');
    if (!this.losing) this.newLinks.push(...ids);
  }

  async updated(link: Link) {
    return this.put(link, link);
  }

  async deleted(id: ShortUrlIdentifier, version: number) {
    return this.put(id, { gone: true, version });
  }

  async holds(id: ShortUrlIdentifier, version: number) {
    if (this.down) throw new Error('cache down');
    return (this.values.get(`${id.domain}/${id.code}`)?.version ?? 0) >= version;
  }

  private async put(id: ShortUrlIdentifier, value: Link | { gone: true; version: number }) {
    if (this.down) throw new Error('cache down');
    const key = `${id.domain}/${id.code}`;
    if ((this.values.get(key)?.version ?? 0) >= value.version) return false;
    if (!this.losing) this.values.set(key, value);
    return true;
  }
}
