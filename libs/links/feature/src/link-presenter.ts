import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { AppConfig } from '@shortlink/config';
import { DEFAULT_CONVERSION_PARAM, deviceTargetsOf, geoTargetsOf, Link, LinkHealth, ShortUrlIdentifier } from '@shortlink/links-domain';
import { APP_CONFIG } from '@shortlink/nest-platform';
import { linkSchema } from './link.schemas';

export type LinkView = z.infer<typeof linkSchema>;

/** How links leave the API (one shape for single, batch and admin answers) and how a code plus an optional domain names one. */
@Injectable()
export class LinkPresenter {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  id(code: string, domain: string | undefined): ShortUrlIdentifier {
    return { domain: (domain ?? this.config.links.defaultDomain).toLowerCase(), code };
  }

  domainQuery(link: Link): string {
    return link.domain === this.config.links.defaultDomain ? '' : `?domain=${encodeURIComponent(link.domain)}`;
  }

  shortUrl(link: Link): string {
    const base = link.domain === this.config.links.defaultDomain ? this.config.links.publicBaseUrl : `https://${link.domain}`;
    return `${base}/${link.code}`;
  }

  /**
   * `JSON.stringify(view(link))` written out by hand, the same text: a batch answers a line per row,
   * and the view object plus its generic serialisation were ~8 % of a batch's CPU
   * (docs/design.md, "Batch creation"). The spec holds the two equal.
   */
  viewJson(link: Link): string {
    const created = link.createdAt.toISOString();
    const updated = link.updatedAt === link.createdAt ? created : link.updatedAt.toISOString();
    const rules = link.redirectRules;
    const geo = rules === null ? null : geoTargetsOf(rules);
    const devices = rules === null ? null : deviceTargetsOf(rules);
    return (
      `{"code":${str(link.code)},"domain":${str(link.domain)},"shortUrl":${str(this.shortUrl(link))},"url":${str(link.targetUrl)},` +
      `"title":${link.title === null ? 'null' : str(link.title)},"tags":${link.tags.length ? JSON.stringify(link.tags) : '[]'},` +
      `"createdAt":"${created}","updatedAt":"${updated}","expiresAt":${link.expiresAt ? `"${link.expiresAt.toISOString()}"` : 'null'},` +
      `"status":${str(link.status)},"redirectType":${link.redirectType},"version":${link.version},"maxClicks":${link.maxClicks},` +
      `"passwordProtected":${link.passwordHash !== null},"utm":${link.utm ? JSON.stringify(link.utm) : 'null'},"forwardQuery":${link.forwardQuery},` +
      `"geoTargets":${geo ? JSON.stringify(geo) : 'null'},"deviceTargets":${devices ? JSON.stringify(devices) : 'null'},` +
      `"redirectRules":${rules ? JSON.stringify(rules) : 'null'},` +
      `"variants":${link.variants ? JSON.stringify(link.variants.map((v) => ({ url: v.url, weight: v.weight }))) : 'null'},` +
      `"clicksPerIpPerMinute":${link.clicksPerIpPerMinute},"crawlable":${link.crawlable},"passwordRememberHours":${link.passwordRememberHours},"social":${link.social ? JSON.stringify(link.social) : 'null'},"appTargets":${link.appTargets ? JSON.stringify(link.appTargets) : 'null'},"trackConversions":${link.trackConversions},"conversionParam":${str(link.conversionParam ?? DEFAULT_CONVERSION_PARAM)},"moderation":{"state":${str(link.moderation)},"reason":${link.moderationReason === null ? 'null' : str(link.moderationReason)},"source":${link.moderationSource ? str(link.moderationSource) : 'null'}},"health":${link.health ? JSON.stringify(healthView(link.health)) : 'null'}}`
    );
  }

  view(link: Link): LinkView {
    return {
      code: link.code,
      domain: link.domain,
      shortUrl: this.shortUrl(link),
      url: link.targetUrl,
      title: link.title,
      tags: [...link.tags],
      createdAt: link.createdAt.toISOString(),
      updatedAt: link.updatedAt.toISOString(),
      expiresAt: link.expiresAt?.toISOString() ?? null,
      status: link.status,
      redirectType: link.redirectType,
      version: link.version,
      maxClicks: link.maxClicks,
      passwordProtected: link.passwordHash !== null,
      utm: link.utm,
      forwardQuery: link.forwardQuery,
      geoTargets: geoTargetsOf(link.redirectRules),
      deviceTargets: deviceTargetsOf(link.redirectRules),
      redirectRules: link.redirectRules ? link.redirectRules.map((r) => ({ url: r.url, conditions: r.conditions.map((c) => ({ ...c })) })) : null,
      variants: link.variants ? link.variants.map((v) => ({ url: v.url, weight: v.weight })) : null,
      clicksPerIpPerMinute: link.clicksPerIpPerMinute,
      crawlable: link.crawlable,
      passwordRememberHours: link.passwordRememberHours,
      social: link.social,
      appTargets: link.appTargets,
      trackConversions: link.trackConversions,
      conversionParam: link.conversionParam ?? DEFAULT_CONVERSION_PARAM,
      moderation: { state: link.moderation, reason: link.moderationReason, source: link.moderationSource ?? null },
      health: link.health ? healthView(link.health) : null,
    };
  }
}

/** A link's health as the API shows it (docs/design.md, "Trust and safety"). */
function healthView(h: LinkHealth): NonNullable<LinkView['health']> {
  return {
    state: h.state,
    since: h.since.toISOString(),
    brokenTargets: [...h.brokenTargets],
    lastStatus: h.lastStatus,
    lastError: h.lastError,
    lastCheckedAt: h.checkedAt.toISOString(),
  };
}

const str = (value: string): string => JSON.stringify(value);
