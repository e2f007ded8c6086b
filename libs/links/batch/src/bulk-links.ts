import { DomainError, ErrorCode } from '@shortlink/core';
import { identifierOf, Link, ShortUrlIdentifier } from '@shortlink/links-domain';
import { LinkEdit, LinkService } from '@shortlink/links-domain';

/** Which links a bulk edit or delete acts on: named ones, or every link of the tenant with a tag. */
export type BulkSelection = { readonly links: readonly ShortUrlIdentifier[] } | { readonly tag: string; readonly domain?: string };

export type BulkOutcome = { readonly id: ShortUrlIdentifier } & ({ readonly link: Link } | { readonly deleted: true } | { readonly error: DomainError });

export interface BulkOptions {
  /** Links one request may act on (10 000). */
  readonly maxLinks: number;
  /** Links changed at the same time. */
  readonly concurrency: number;
}

/**
 * Bulk edit and delete (docs/design.md, "Batch creation"): each link goes through LinkService.update
 * or remove, so every cache layer and every redirect instance hears of each change exactly as after
 * a single edit; one link failing (gone, another tenant's) fails only its own result.
 */
export class BulkLinks {
  constructor(
    private readonly links: LinkService,
    private readonly options: BulkOptions,
  ) {}

  /** The links a selection names, each once; a tag selecting more than `maxLinks` is refused before anything changes. */
  async select(tenantId: string, selection: BulkSelection): Promise<ShortUrlIdentifier[]> {
    if ('links' in selection) {
      const unique = new Map(selection.links.map((id) => [`${id.domain}/${id.code}`, id]));
      if (unique.size > this.options.maxLinks) throw tooMany(this.options.maxLinks);
      return [...unique.values()];
    }
    const found: ShortUrlIdentifier[] = [];
    let cursor: string | null = null;
    do {
      const page = await this.links.list(tenantId, { limit: 100, cursor, tag: selection.tag, domain: selection.domain });
      found.push(...page.links.map(identifierOf));
      if (found.length > this.options.maxLinks) throw tooMany(this.options.maxLinks);
      cursor = page.nextCursor;
    } while (cursor);
    return found;
  }

  edit(tenantId: string, ids: readonly ShortUrlIdentifier[], edit: LinkEdit): AsyncGenerator<BulkOutcome> {
    return this.each(ids, async (id) => ({ id, link: await this.links.update(tenantId, id, edit, null) }));
  }

  remove(tenantId: string, ids: readonly ShortUrlIdentifier[]): AsyncGenerator<BulkOutcome> {
    return this.each(ids, async (id) => {
      await this.links.remove(tenantId, id, null);
      return { id, deleted: true as const };
    });
  }

  /** Runs `act` on every id, `concurrency` at a time, and yields the outcomes in the order of `ids`. */
  private async *each(ids: readonly ShortUrlIdentifier[], act: (id: ShortUrlIdentifier) => Promise<BulkOutcome>): AsyncGenerator<BulkOutcome> {
    const settle = (id: ShortUrlIdentifier) =>
      act(id).catch((error: unknown): BulkOutcome => ({
        id,
        error:
          error instanceof DomainError
            ? error
            : new DomainError(ErrorCode.DEPENDENCY_UNAVAILABLE, 'a store did not answer; retry this link', { retryAfterSeconds: 1 }, { cause: error }),
      }));
    const running: Array<Promise<BulkOutcome>> = [];
    let next = 0;
    while (next < ids.length || running.length) {
      while (running.length < this.options.concurrency && next < ids.length) running.push(settle(ids[next++]));
      yield await running.shift()!;
    }
  }
}

const tooMany = (max: number) =>
  new DomainError(ErrorCode.BATCH_TOO_LARGE, `a bulk change acts on at most ${max} links; name fewer, or narrow the tag with a domain`, { maxLinks: max });
