import { DomainError, ErrorCode } from '@shortlink/core';
import { checkConversionParam, checkTags, DEFAULT_CONVERSION_PARAM } from './link-options';
import type { Link } from './link';

/**
 * Conversion tracking turned on for a tag (docs/design.md, "Conversions"): the tenant's tracked tags,
 * each with the query parameter its links' click ids go in. Kept in the meta database (the
 * conversions' settings, `conversion_tags`), shared by every generation instance.
 */
export interface TagTrackingStore {
  /** Tag -> click id parameter, of every tag of the tenant that tracks. */
  trackedTags(tenantId: string): Promise<ReadonlyMap<string, string>>;
  /** Turns tracking on for a tag with this parameter, or off (null). */
  setTagTracking(tenantId: string, tag: string, conversionParam: string | null): Promise<void>;
}

export const TAG_TRACKING_STORE = Symbol('TAG_TRACKING_STORE');

/** A tag's conversion settings as the API gives them. */
export interface TagSettings {
  readonly tag: string;
  readonly trackConversions: boolean;
  /** The click id's query parameter: the tag's own, `sl_cid` by default. */
  readonly conversionParam: string;
}

/**
 * The click id parameter a link gets from its tags: that of its first tag (in the link's order)
 * that tracks, else null. The link's own `trackConversions` comes first where the rules are built
 * (`rulesOf`), and a tracked tag on a shared domain's link tracks too (the tenant's own link).
 */
export function tagConversionParamOf(tags: readonly string[], tracked: ReadonlyMap<string, string>): string | null {
  if (tracked.size === 0) return null;
  for (const tag of tags) {
    const param = tracked.get(tag);
    if (param !== undefined) return param;
  }
  return null;
}

/** The link with the parameter its tags give it now (the same object when nothing changes). */
export function withTagTracking(link: Link, tracked: ReadonlyMap<string, string>): Link {
  const param = tagConversionParamOf(link.tags, tracked);
  return (link.tagConversionParam ?? null) === param ? link : { ...link, tagConversionParam: param };
}

/** A PATCH of a tag's settings, checked: the tag as links carry it, and the parameter (null: off). */
export function checkTagTracking(tag: unknown, edit: { trackConversions?: unknown; conversionParam?: unknown }): { tag: string; param: string | null } {
  const [name] = typeof tag === 'string' && tag.trim() !== '' ? checkTags([tag]) : [];
  if (name === undefined) throw new DomainError(ErrorCode.VALIDATION_FAILED, 'the tag must be 1-50 letters, digits, spaces or "_ . : / -"', { field: 'tag' });
  if (typeof edit.trackConversions !== 'boolean')
    throw new DomainError(ErrorCode.VALIDATION_FAILED, 'trackConversions must be true or false', { field: 'trackConversions' });
  if (!edit.trackConversions) return { tag: name, param: null };
  return { tag: name, param: checkConversionParam(edit.conversionParam) ?? DEFAULT_CONVERSION_PARAM };
}
