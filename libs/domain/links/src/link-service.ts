import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import { checkAlias } from './alias';
import { CodeStrategy, SegmentIdAllocator } from './codes';
import { Link, identifierOf, ShortUrlIdentifier } from './link';
import { LinkCache } from './link-cache';
import { checkExpiresAt, checkRedirectType } from './link-options';
import { DuplicateLinkError } from './ports';
import { ShardedLinkRepository } from './sharded-link-repository';
import { checkTargetUrl } from './url-policy';

export interface LinkCreation {
  readonly tenantId: string;
  readonly url: unknown;
  readonly alias?: unknown;
  /** 301 or 302 (default). */
  readonly redirectType?: unknown;
  /** ISO 8601 date-time with a zone; none by default. */
  readonly expiresAt?: unknown;
}

export interface LinkServiceOptions {
  readonly defaultDomain: string;
  readonly shortDomains: readonly string[];
  /** Collision retries for generated codes (a custom alias may occupy a generated code). */
  readonly maxCodeAttempts?: number;
}

export class LinkService {
  private readonly maxAttempts: number;

  constructor(
    private readonly links: ShardedLinkRepository,
    private readonly ids: SegmentIdAllocator,
    private readonly codes: CodeStrategy,
    private readonly cache: LinkCache,
    private readonly options: LinkServiceOptions,
    private readonly clock: Clock = systemClock,
    /** Called after each create, e.g. to add the link to the Bloom filter. */
    private readonly onCreated: ReadonlyArray<(link: Link) => Promise<void>> = [],
  ) {
    this.maxAttempts = options.maxCodeAttempts ?? 8;
  }

  async create(input: LinkCreation): Promise<Link> {
    const targetUrl = checkTargetUrl(input.url, { shortDomains: this.options.shortDomains });
    const alias = input.alias === undefined || input.alias === null ? null : checkAlias(input.alias);
    const redirectType = checkRedirectType(input.redirectType);
    const expiresAt = checkExpiresAt(input.expiresAt, this.clock.now());
    const domain = this.options.defaultDomain;
    const createdAt = new Date(Math.floor(this.clock.now() / 1000) * 1000);
    const base = { domain, targetUrl, tenantId: input.tenantId, createdAt, expiresAt, status: 'active' as const, redirectType };

    if (alias) {
      const link: Link = { ...base, id: (await this.nextId()).toString(), code: alias };
      try {
        await this.links.insert(link);
      } catch (error) {
        if (error instanceof DuplicateLinkError) {
          throw new DomainError(ErrorCode.ALIAS_TAKEN, `alias "${alias}" is already taken on ${domain}`, { alias, domain });
        }
        throw error;
      }
      return this.afterCreate(link);
    }

    for (let attempt = 0; attempt < this.maxAttempts; attempt++) {
      const id = await this.nextId();
      const link: Link = { ...base, id: id.toString(), code: this.codes.codeFor(id, targetUrl, attempt) };
      try {
        await this.links.insert(link);
        return this.afterCreate(link);
      } catch (error) {
        if (!(error instanceof DuplicateLinkError)) throw error;
      }
    }
    throw new DomainError(ErrorCode.CODE_SPACE_EXHAUSTED, `no free code after ${this.maxAttempts} attempts`);
  }

  async get(tenantId: string, id: ShortUrlIdentifier): Promise<Link> {
    const link = await this.links.findByCode(id);
    // Another tenant's link is reported as absent, so codes of other tenants cannot be probed.
    if (!link || link.tenantId !== tenantId) {
      throw new DomainError(ErrorCode.LINK_NOT_FOUND, `no link ${id.code} on ${id.domain}`, { shortCode: id.code, domain: id.domain });
    }
    return link;
  }

  private async nextId(): Promise<bigint> {
    try {
      return await this.ids.nextId();
    } catch (error) {
      throw new DomainError(ErrorCode.DEPENDENCY_UNAVAILABLE, 'the id sequence is unavailable; retry shortly', { retryAfterSeconds: 1 }, { cause: error });
    }
  }

  /** A scan may have left a null-value entry for this code before it existed: drop it. */
  private async afterCreate(link: Link): Promise<Link> {
    await this.cache.invalidate(identifierOf(link)).catch(() => undefined);
    for (const listener of this.onCreated) await listener(link);
    return link;
  }
}
