import { createHash } from 'crypto';
import type { Link, LinkHealth } from '@shortlink/links-domain';
import { targetsOf } from '@shortlink/links-domain';
import { IndexedLink, TargetRecord } from './ports';
import { normalHost } from './threats';

/** The key of a target URL in the index: sha256, 32 hex characters. */
export const urlHashOf = (url: string): string => createHash('sha256').update(url).digest('hex').slice(0, 32);

/** The host of a target as the URL policy judged it (lower case, punycode, no trailing dot); null for a URL without one. */
export function hostOfTarget(url: string): string | null {
  try {
    return normalHost(new URL(url).hostname) ?? new URL(url).hostname.toLowerCase().replace(/\.+$/, '');
  } catch {
    return null;
  }
}

/** A link as the index of targets keeps it: every target a visitor can be sent to (docs/design.md, "URL safety"). */
export function indexedLinkOf(link: Link): IndexedLink {
  const targets = targetsOf(link).flatMap((url) => {
    const host = hostOfTarget(url);
    return host ? [{ url, host }] : [];
  });
  return { linkId: link.id, domain: link.domain, code: link.code, tenantId: link.tenantId, targets };
}

/**
 * A link's health from what the checks know of its targets (docs/design.md, "Trust and safety"):
 * broken when any target is, listing those; the status and error shown are the first broken
 * target's, else `url`'s; `since` is when the first broken target broke (or, when ok, when the
 * last target to recover did); `checkedAt` the latest check. Null while no target was checked.
 */
export function linkHealthOf(mainUrl: string, targets: readonly TargetRecord[]): LinkHealth | null {
  const checked = targets.filter((t) => t.state !== 'unchecked' && t.checkedAt !== null);
  if (checked.length === 0) return null;
  const broken = checked.filter((t) => t.state === 'broken');
  const decisive = broken[0] ?? checked.find((t) => t.url === mainUrl) ?? checked[0];
  const times = (pick: (t: TargetRecord) => Date | null, list: readonly TargetRecord[]) => list.map((t) => pick(t)?.getTime() ?? 0);
  const since = broken.length ? Math.min(...times((t) => t.since, broken)) : Math.max(...times((t) => t.since, checked));
  return {
    state: broken.length ? 'broken' : 'ok',
    since: new Date(since),
    brokenTargets: broken.map((t) => t.url),
    lastStatus: decisive.lastStatus,
    lastError: decisive.lastError,
    checkedAt: new Date(Math.max(...times((t) => t.checkedAt, checked))),
  };
}
