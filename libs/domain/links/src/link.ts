export type LinkStatus = 'active' | 'disabled';
export type RedirectType = 301 | 302;

/** A short link. Identified by (domain, code); stored on the shard the router names for `code`. */
export interface Link {
  /** Globally unique id from the segment allocator, as a decimal string (MySQL BIGINT). */
  readonly id: string;
  readonly domain: string;
  readonly code: string;
  readonly targetUrl: string;
  readonly tenantId: string;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly status: LinkStatus;
  readonly redirectType: RedirectType;
}

/** Identifies a short URL the way a redirect request or an API call names it. */
export interface ShortUrlIdentifier {
  readonly domain: string;
  readonly code: string;
}

export const identifierOf = (link: Pick<Link, 'domain' | 'code'>): ShortUrlIdentifier => ({ domain: link.domain, code: link.code });
