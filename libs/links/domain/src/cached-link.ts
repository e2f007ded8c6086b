import type { DeviceTarget } from '@shortlink/visitors-domain';
import { AppTargets, Link, LinkSocial, LinkStatus, RedirectType, Utm, Variant } from './link';
import type { RedirectRule } from './redirect-rules';
import { DEFAULT_CONVERSION_PARAM } from './link-options';

/**
 * What changes where a redirect goes, beyond the target; absent on a plain link, so the common
 * case reads, stores and checks nothing more (docs/design.md, "Link options").
 */
export interface RedirectRules {
  readonly maxClicks?: number;
  readonly passwordHash?: string;
  readonly clicksPerIpPerMinute?: number;
  /** The redirect rules, in order (docs/design.md, "Redirect rules"). */
  readonly redirectRules?: readonly RedirectRule[];
  /**
   * Country and device targets as values cached before redirect rules existed held them: read as
   * the rules they are (rulesFromTargets), never written any more.
   */
  readonly geoTargets?: Readonly<Record<string, string>>;
  readonly deviceTargets?: Readonly<Partial<Record<DeviceTarget, string>>>;
  readonly variants?: readonly Variant[];
  readonly utm?: Utm;
  /** Present (false) only when the visitor's query string is not carried over. */
  readonly forwardQuery?: false;
  /** Hours a right password is remembered, only when the owner set it (default 12, "Link options"). */
  readonly passwordRememberHours?: number;
  /** The app to open on iOS and Android; the rest of the rules pick the fallback (docs/design.md, "Link options"). */
  readonly appTargets?: AppTargets;
  /**
   * Present on a link with conversion tracking: the query parameter that carries each click's id to
   * the target (docs/analytics.md, "Conversions").
   */
  readonly clickIdParam?: string;
}

/** What the redirect path needs of a link: the value the read path caches (docs/design.md, "Redirect read path"). */
export interface CachedLink {
  readonly id: string;
  readonly tenantId: string;
  readonly targetUrl: string;
  readonly redirectType: RedirectType;
  readonly expiresAt: number | null;
  readonly status: LinkStatus;
  /** The link's version: a cache never replaces a newer value with an older one. */
  readonly version: number;
  /** Epoch ms, for the preview page. */
  readonly createdAt: number;
  readonly title?: string;
  readonly moderation?: 'flagged' | 'banned';
  readonly rules?: RedirectRules;
  /** The card for unfurling bots, only on a link that has one (docs/design.md, "Link options"). */
  readonly social?: LinkSocial;
  /**
   * The targets the dead-link checks found broken, only on a link that has any (docs/design.md,
   * "Trust and safety"): a visitor sent to one of them meets the tenant's fallback, if it set one.
   */
  readonly broken?: readonly string[];
}

export function rulesOf(link: Link): RedirectRules | undefined {
  const rules: { -readonly [K in keyof RedirectRules]: RedirectRules[K] } = {};
  if (link.maxClicks !== null) rules.maxClicks = link.maxClicks;
  if (link.passwordHash !== null) rules.passwordHash = link.passwordHash;
  if (link.clicksPerIpPerMinute !== null) rules.clicksPerIpPerMinute = link.clicksPerIpPerMinute;
  if (link.redirectRules !== null) rules.redirectRules = link.redirectRules;
  if (link.variants !== null) rules.variants = link.variants;
  if (link.utm !== null) rules.utm = link.utm;
  if (!link.forwardQuery) rules.forwardQuery = false;
  if (link.appTargets !== null) rules.appTargets = link.appTargets;
  if (link.trackConversions) rules.clickIdParam = link.conversionParam ?? DEFAULT_CONVERSION_PARAM;
  else if (link.tagConversionParam) rules.clickIdParam = link.tagConversionParam; // a tracked tag (docs/design.md, "Conversions")
  if (link.passwordHash !== null && link.passwordRememberHours !== null) rules.passwordRememberHours = link.passwordRememberHours;
  return Object.keys(rules).length ? rules : undefined;
}

export const toCachedLink = (link: Link): CachedLink => {
  const rules = rulesOf(link);
  return {
    id: link.id,
    tenantId: link.tenantId,
    targetUrl: link.targetUrl,
    redirectType: link.redirectType,
    expiresAt: link.expiresAt ? link.expiresAt.getTime() : null,
    status: link.status,
    version: link.version,
    createdAt: link.createdAt.getTime(),
    ...(link.title !== null ? { title: link.title } : {}),
    ...(link.moderation !== 'clear' ? { moderation: link.moderation } : {}),
    ...(rules ? { rules } : {}),
    ...(link.social !== null ? { social: link.social } : {}),
    ...(link.health?.state === 'broken' && link.health.brokenTargets.length ? { broken: link.health.brokenTargets } : {}),
  };
};
