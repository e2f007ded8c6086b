import type { BotFilter } from '@shortlink/clicks-domain';
import type { LinkRepository } from '@shortlink/links-domain';

/** What a stream asks for: every filter given must match (tag by the link's tags at the time of the click, as read). */
export interface LiveFilter {
  readonly code?: string;
  /** Lower case. */
  readonly domain?: string;
  readonly tag?: string;
  readonly bots: BotFilter;
}

/** What a filter looks at of a click. */
export interface FilterableClick {
  readonly domain: string;
  readonly code: string;
  readonly linkId: string;
  readonly bot: boolean;
}

/** The tags of a link, by its domain and code. */
export interface TagLookup {
  tagsOf(click: Pick<FilterableClick, 'domain' | 'code' | 'linkId'>): Promise<readonly string[]>;
}

/** The filters that need no look-up: code, domain and bots. */
export function matchesPlainly(filter: LiveFilter, click: FilterableClick): boolean {
  if (filter.code !== undefined && click.code !== filter.code) return false;
  if (filter.domain !== undefined && click.domain !== filter.domain) return false;
  if (filter.bots === 'exclude' && click.bot) return false;
  if (filter.bots === 'only' && !click.bot) return false;
  return true;
}

/** Whether the click passes every filter; the tag asks `tags` (only when the others passed). */
export async function matches(filter: LiveFilter, click: FilterableClick, tags: TagLookup): Promise<boolean> {
  if (!matchesPlainly(filter, click)) return false;
  if (filter.tag === undefined) return true;
  return (await tags.tagsOf(click)).includes(filter.tag);
}

export interface LinkTagCacheOptions {
  /** How long a link's tags are taken as read (default 30 s): a tag added later reaches the stream within it. */
  readonly ttlMs?: number;
  /** Links held at most (default 10 000); the oldest read goes first. */
  readonly maxEntries?: number;
  readonly now?: () => number;
}

/**
 * A link's tags read from the link shards (the link read path: LinkRepository.findByCode) and kept
 * for a while in this process, so a stream filtered by tag costs one shard read per link and TTL,
 * not one per click. Concurrent reads of one link share one query. A link that is gone, or a read
 * that fails, has no tags (its click does not pass a tag filter); a failure is not kept.
 */
export class LinkTagCache implements TagLookup {
  private readonly entries = new Map<string, { linkId: string; tags: readonly string[]; until: number }>();
  private readonly pending = new Map<string, Promise<readonly string[]>>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(
    private readonly links: Pick<LinkRepository, 'findByCode'>,
    options: LinkTagCacheOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 30_000;
    this.maxEntries = Math.max(1, options.maxEntries ?? 10_000);
    this.now = options.now ?? Date.now;
  }

  async tagsOf(click: Pick<FilterableClick, 'domain' | 'code' | 'linkId'>): Promise<readonly string[]> {
    const key = `${click.domain}/${click.code}`;
    const held = this.entries.get(key);
    // A code deleted and made again is another link: its tags are read again.
    if (held && held.until > this.now() && held.linkId === click.linkId) return held.tags;
    let read = this.pending.get(key);
    if (!read) {
      read = this.read(key, click).finally(() => this.pending.delete(key));
      this.pending.set(key, read);
    }
    return read;
  }

  private async read(key: string, click: Pick<FilterableClick, 'domain' | 'code' | 'linkId'>): Promise<readonly string[]> {
    let tags: readonly string[];
    let linkId: string;
    try {
      const link = await this.links.findByCode({ domain: click.domain, code: click.code });
      tags = link ? [...link.tags] : [];
      linkId = link?.id ?? '';
    } catch {
      return [];
    }
    this.entries.delete(key);
    this.entries.set(key, { linkId, tags, until: this.now() + this.ttlMs });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return tags;
  }
}
