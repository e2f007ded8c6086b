import { DomainError, ErrorCode } from '@shortlink/core';
import type { RedirectRule } from './redirect-rules';

/** `expired` is set by the expiry job; the redirect checks `expiresAt` itself as well. */
export type LinkStatus = 'active' | 'disabled' | 'expired';
export type RedirectType = 301 | 302;
/** URL safety: `flagged` links show a warning page first, `banned` ones a blocked page. */
export type Moderation = 'clear' | 'flagged' | 'banned';

/**
 * Who decided a link's moderation (docs/design.md, "Trust and safety"): the URL policy's own rules
 * (`url-policy`), a threat feed (`feed:<format>`), Google Web Risk (`web-risk`), visitors' reports
 * acted on by an operator, or an operator (`operator`).
 */
export type ModerationSource = 'url-policy' | 'web-risk' | 'operator' | `feed:${string}`;

/** Whether a link's targets answer (docs/design.md, "Trust and safety", dead links). */
export type HealthState = 'ok' | 'broken';

/** What the dead-link checks found of a link's targets, as of their last check. */
export interface LinkHealth {
  readonly state: HealthState;
  /** When the link entered this state. */
  readonly since: Date;
  /** The targets found broken (empty when `ok`); a visitor sent to one of them meets the tenant's fallback. */
  readonly brokenTargets: readonly string[];
  /** The HTTP status of the last answer (of the first broken target, else of `url`); null when none came. */
  readonly lastStatus: number | null;
  /** Why the last check failed without a status (`timeout`, `redirect-loop`, `private-address`, ...); null otherwise. */
  readonly lastError: string | null;
  readonly checkedAt: Date;
}

export interface Utm {
  readonly source?: string;
  readonly medium?: string;
  readonly campaign?: string;
  readonly term?: string;
  readonly content?: string;
}

export interface Variant {
  readonly url: string;
  /** Relative weight, 1..1000. */
  readonly weight: number;
}

/** What unfurling bots show of a link (docs/design.md, "Link options"): Open Graph and Twitter Card tags. */
export interface LinkSocial {
  readonly title: string;
  readonly description: string | null;
  /** An http(s) URL that passed the URL policy. */
  readonly image: string | null;
}

/**
 * Where a link opens in the visitor's app, by device (docs/design.md, "Link options"): an app URL
 * scheme (`myapp://product/42`) or an https universal link / app link. The link's target (or its
 * device target) is the fallback for a visitor without the app.
 */
export type AppTargets = Readonly<Partial<Record<'ios' | 'android', string>>>;

/** What a tenant can set on a link besides its target (docs/design.md, "Link options"). */
export interface LinkOptions {
  readonly title: string | null;
  readonly tags: readonly string[];
  readonly maxClicks: number | null;
  /** argon2id hash; the password itself is never stored. */
  readonly passwordHash: string | null;
  readonly utm: Utm | null;
  /** Carry the visitor's own query string to the target (default true). */
  readonly forwardQuery: boolean;
  /**
   * Targets chosen by conditions on the request, in order, the first whose conditions all hold
   * (docs/design.md, "Redirect rules"); country and device targets are rules of one condition
   * (`geoTargetsOf`, `deviceTargetsOf`).
   */
  readonly redirectRules: readonly RedirectRule[] | null;
  readonly variants: readonly Variant[] | null;
  readonly clicksPerIpPerMinute: number | null;
  /** The domain's robots.txt lets crawlers fetch this link (docs/design.md, "Domain settings"); default false. */
  readonly crawlable: boolean;
  /**
   * How long a right password is remembered by the visitor's browser, in hours (0: asked at every
   * visit); null: the default, 12 h (docs/design.md, "Link options").
   */
  readonly passwordRememberHours: number | null;
  /** The link's card for unfurling bots; null: bots get the redirect. */
  readonly social: LinkSocial | null;
  /** The app to open on iOS and Android; null: every device gets the redirect. */
  readonly appTargets: AppTargets | null;
  /**
   * Conversion tracking (docs/analytics.md, "Conversions"): each click gets a click id, passed to the
   * target as the query parameter `conversionParam` (null: `sl_cid`); default false.
   */
  readonly trackConversions: boolean;
  readonly conversionParam: string | null;
}

export const NO_OPTIONS: LinkOptions = {
  title: null,
  tags: [],
  maxClicks: null,
  passwordHash: null,
  utm: null,
  forwardQuery: true,
  redirectRules: null,
  variants: null,
  clicksPerIpPerMinute: null,
  crawlable: false,
  passwordRememberHours: null,
  social: null,
  appTargets: null,
  trackConversions: false,
  conversionParam: null,
};

/** A short link. Identified by (domain, code); stored on the shard the router names for `code`. */
export interface Link extends LinkOptions {
  /** Globally unique id from the segment allocator, as a decimal string (MySQL BIGINT). */
  readonly id: string;
  /**
   * The click id parameter one of its tags gives it (conversion tracking on a tag, docs/design.md
   * "Conversions"): resolved when the link's tags or a tag's setting change, and stored with the
   * link, so the redirect's cached record needs no tags. Absent or null: none.
   */
  readonly tagConversionParam?: string | null;
  readonly domain: string;
  readonly code: string;
  readonly targetUrl: string;
  readonly tenantId: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly expiresAt: Date | null;
  readonly status: LinkStatus;
  readonly redirectType: RedirectType;
  /** Grows by one with every change: the ETag of the link, and the guard of concurrent edits. */
  readonly version: number;
  readonly moderation: Moderation;
  /** Why the link was flagged or banned (a rule's name, or an operator's note). */
  readonly moderationReason: string | null;
  /** Who decided `moderation` (absent or null: nobody did, the link is clear as made). */
  readonly moderationSource?: ModerationSource | null;
  /** What the dead-link checks found; absent or null: not checked yet. */
  readonly health?: LinkHealth | null;
}

/** Every target a link sends visitors to: `url`, the variants, the redirect rules' targets, the https app targets (docs/design.md, "URL safety"). */
export function targetsOf(link: Pick<Link, 'targetUrl' | 'variants' | 'redirectRules' | 'appTargets'>): string[] {
  const all = new Set<string>([link.targetUrl]);
  for (const v of link.variants ?? []) all.add(v.url);
  for (const rule of link.redirectRules ?? []) all.add(rule.url);
  for (const url of Object.values(link.appTargets ?? {})) if (url?.startsWith('https:')) all.add(url);
  return [...all];
}

/** Identifies a short URL the way a redirect request or an API call names it. */
export interface ShortUrlIdentifier {
  readonly domain: string;
  readonly code: string;
}

export const identifierOf = (link: Pick<Link, 'domain' | 'code'>): ShortUrlIdentifier => ({ domain: link.domain, code: link.code });

/**
 * LINK_NOT_FOUND as a visitor or another tenant sees it: nothing tells a disabled link or another
 * tenant's from a code that does not exist. `source` (where a redirect's lookup ended) never leaves the process.
 */
export function unknownLink(id: ShortUrlIdentifier, source?: string): DomainError {
  const details = { shortCode: id.code, domain: id.domain, ...(source ? { source } : {}) };
  return new DomainError(ErrorCode.LINK_NOT_FOUND, `no link ${id.code} on ${id.domain}`, details);
}
