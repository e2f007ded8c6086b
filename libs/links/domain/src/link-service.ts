import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import { requestedCode } from './alias';
import { CodeStrategy } from '@shortlink/link-codes';
import { SegmentIdAllocator } from './segment-id-allocator';
import { Link, LinkHealth, LinkStatus, Moderation, ModerationSource, ShortUrlIdentifier, unknownLink } from './link';
import { createdEvent, deletedEvent, editedEvent, LinkChangeEvent } from './events/link-events';
import { ListCursors } from './listing';
import {
  checkClicksPerIpPerMinute,
  checkCrawlable,
  checkDeviceTargets,
  checkExpiresAt,
  checkForwardQuery,
  checkGeoTargets,
  checkMaxClicks,
  checkPassword,
  checkPasswordHash,
  checkPasswordRememberHours,
  checkRedirectType,
  checkAppTargets,
  checkSocial,
  checkStatus,
  checkTags,
  checkTitle,
  checkTrackConversions,
  checkConversionParam,
  DEFAULT_CONVERSION_PARAM,
  checkUtm,
  checkVariants,
  UrlCheck,
} from './link-options';
import { DuplicateLinkError, HealthFilter, LinkObserver, LinkRepository, PasswordHasher } from './ports';
import { checkRedirectRules, RedirectRule, RULE_LIMITS, withShorthand } from './redirect-rules';
import { checkTagTracking, TagSettings, TagTrackingStore, withTagTracking } from './tag-tracking';
import { CheckedUrl, HostLookups, ParsedTarget, ReputationVerdict, strongerVerdict, TargetReputation, UrlFlag, UrlPolicy } from '@shortlink/url-policy';

/** The body of a create: every field as the API received it (validated here). */
export interface LinkCreation {
  readonly tenantId: string;
  readonly url: unknown;
  readonly alias?: unknown;
  readonly domain?: unknown;
  readonly redirectType?: unknown;
  readonly expiresAt?: unknown;
  readonly title?: unknown;
  readonly tags?: unknown;
  readonly maxClicks?: unknown;
  readonly password?: unknown;
  readonly utm?: unknown;
  readonly forwardQuery?: unknown;
  /** The redirect rules (docs/design.md, "Redirect rules"); `geoTargets` and `deviceTargets` are their shorthand, applied after them. */
  readonly redirectRules?: unknown;
  readonly geoTargets?: unknown;
  readonly deviceTargets?: unknown;
  readonly variants?: unknown;
  readonly clicksPerIpPerMinute?: unknown;
  readonly crawlable?: unknown;
  readonly passwordRememberHours?: unknown;
  readonly social?: unknown;
  readonly appTargets?: unknown;
  /** Conversion tracking and the click id's query parameter (docs/analytics.md, "Conversions"). */
  readonly trackConversions?: unknown;
  readonly conversionParam?: unknown;
  /**
   * What an import carries over (docs/design.md, "Import and export"): a code kept from another
   * shortener (instead of `alias`), the link's status, and its password as the argon2id hash an
   * export gave (instead of `password`).
   */
  readonly legacyCode?: unknown;
  readonly status?: unknown;
  readonly passwordHash?: unknown;
}

/** The fields a PATCH may change; absent: unchanged, null: cleared (back to the default). */
export const EDITABLE_FIELDS = [
  'url',
  'title',
  'tags',
  'maxClicks',
  'password',
  'utm',
  'forwardQuery',
  'redirectRules',
  'geoTargets',
  'deviceTargets',
  'variants',
  'clicksPerIpPerMinute',
  'expiresAt',
  'redirectType',
  'status',
  'crawlable',
  'passwordRememberHours',
  'social',
  'appTargets',
  'trackConversions',
  'conversionParam',
] as const;
export type LinkEdit = Partial<Record<(typeof EDITABLE_FIELDS)[number], unknown>>;

/** A create validated and ready to store: everything of the link but its id and code. */
export type PreparedLink = Omit<Link, 'id' | 'code'> & { readonly alias: string | null };

export interface LinkListRequest {
  readonly limit: number;
  readonly cursor?: string | null;
  readonly q?: string;
  readonly tag?: string;
  readonly status?: LinkStatus;
  readonly domain?: string;
  readonly health?: HealthFilter;
}

/** A link before and after one change of it. */
export interface LinkUpdate {
  readonly before: Link;
  readonly after: Link;
}

export interface LinkPage {
  readonly links: Link[];
  /** Opaque; null on the last page. */
  readonly nextCursor: string | null;
}

export interface LinkServiceOptions {
  readonly defaultDomain: string;
  /** Domains links may be created on besides the tenant's own (docs/design.md, "Identity, shards and codes"). */
  readonly sharedDomains: readonly string[];
  /** A deleted code is not handed out again for this long (90 days by default). */
  readonly retireForMs: number;
  /** Collision retries for generated codes (a custom alias may occupy a generated code). */
  readonly maxCodeAttempts?: number;
  /** Seals the listing's cursors; the apps derive it from the code secret (every instance opens every cursor). Default: a key of this process. */
  readonly listCursors?: ListCursors;
}

/** Tenant-owned domains (a tenant may create links on its own domains); empty until tenants have domains. */
export interface TenantDomainCheck {
  owns(tenantId: string, domain: string): Promise<boolean>;
}

/** Who hears of a change right after its commit (the outbox relay). Never throws: the change's events are in its shard's outbox. */
export interface AfterCommit {
  deliverNow(events: readonly LinkChangeEvent[]): Promise<boolean>;
}

/** What LinkService works with: its ports, and the services it shares with batch creation. */
export interface LinkServiceParts {
  readonly links: LinkRepository;
  readonly ids: SegmentIdAllocator;
  readonly codes: CodeStrategy;
  /**
   * Delivers the events of a committed change at once (the outbox relay's `deliverNow`): the caches
   * and every redirect instance learn it before the answer when they can, and from the outbox
   * otherwise (docs/design.md, "Edits reach every instance").
   */
  readonly events: AfterCommit;
  readonly passwords: PasswordHasher;
  readonly urls: UrlPolicy;
  readonly tenantDomains?: TenantDomainCheck;
  /** Threat feeds and Web Risk, asked about every target a create or an edit sets (docs/design.md, "Trust and safety"). */
  readonly reputation?: TargetReputation | null;
  /** Told of links stored and removed (the safety context's index of targets by host). */
  readonly observer?: LinkObserver | null;
  /** The tenants' tags with conversion tracking (docs/design.md, "Conversions"); none: no tag tracks. */
  readonly tagTracking?: TagTrackingStore | null;
  readonly clock?: Clock;
}

/** What switching a tag's tracking did: its settings, and how many of its links were rewritten. */
export interface TagTrackingResult extends TagSettings {
  readonly linksUpdated: number;
}

/** Links of a tag read per page when a tag's tracking is switched. */
const TAG_PAGE = 200;

/** Tags listed at most (a picker, not an export: the links listing filters by any tag). */
export const MAX_TAGS_LISTED = 1000;

/**
 * Links of tenants: create, read, list, edit, delete (docs/design.md, "Link options", "Edits
 * reach every instance"). A change writes the shard (versioned) with its event in the shard's
 * outbox, in one transaction; then the caches and every redirect instance are told, before the
 * answer if they can be, and by the outbox relay in any case.
 */
export class LinkService {
  private readonly links: LinkRepository;
  private readonly ids: SegmentIdAllocator;
  private readonly codes: CodeStrategy;
  private readonly events: AfterCommit;
  private readonly passwords: PasswordHasher;
  private readonly urls: UrlPolicy;
  private readonly tenantDomains: TenantDomainCheck;
  private readonly reputation: TargetReputation | null;
  private readonly observer: LinkObserver | null;
  private readonly tagTracking: TagTrackingStore | null;
  /** Reads of a tenant's tracked tags in flight, shared by the concurrent creates of a batch (never kept after: a switch is seen by the next read). */
  private readonly trackedReads = new Map<string, Promise<ReadonlyMap<string, string>>>();
  private readonly clock: Clock;
  private readonly maxAttempts: number;
  private readonly cursors: ListCursors;

  constructor(
    parts: LinkServiceParts,
    private readonly options: LinkServiceOptions,
  ) {
    ({ links: this.links, ids: this.ids, codes: this.codes, events: this.events, passwords: this.passwords, urls: this.urls } = parts);
    this.tenantDomains = parts.tenantDomains ?? { owns: async () => false };
    this.reputation = parts.reputation ?? null;
    this.observer = parts.observer ?? null;
    this.tagTracking = parts.tagTracking ?? null;
    this.clock = parts.clock ?? systemClock;
    this.maxAttempts = options.maxCodeAttempts ?? 8;
    this.cursors = options.listCursors ?? ListCursors.ephemeral();
  }

  async create(input: LinkCreation): Promise<Link> {
    const { alias, ...base } = await this.prepare(input);
    const { domain, createdAt } = base;
    if (alias) {
      const id = { domain, code: alias };
      const retired = await this.links.retiredUntil(id, createdAt);
      if (retired) throw this.aliasRetired(base.tenantId, id, retired);
      const link: Link = { ...base, id: (await this.nextId()).toString(), code: alias };
      try {
        await this.links.insert(link);
      } catch (error) {
        if (error instanceof DuplicateLinkError) throw await this.aliasTaken(base.tenantId, id);
        throw error;
      }
      return this.afterCreate(link);
    }
    // A generated code that lands on a shard that is down (or whose move is frozen) is chosen again:
    // another id, another code, most likely another shard (docs/design.md, "Failure containment").
    let elsewhere = 0;
    let unavailable: DomainError | null = null;
    for (let attempt = 0; attempt < this.maxAttempts + elsewhere; attempt++) {
      const id = await this.nextId();
      const link: Link = { ...base, id: id.toString(), code: this.codes.codeFor(id, base.targetUrl, attempt) };
      try {
        await this.links.insert(link, { relocatable: true });
        return this.afterCreate(link);
      } catch (error) {
        if (
          error instanceof DomainError &&
          error.code === ErrorCode.SHARD_UNAVAILABLE &&
          error.details.reason !== 'ring-unknown' &&
          elsewhere < MAX_RELOCATIONS
        ) {
          unavailable = error;
          elsewhere++;
          continue;
        }
        if (!(error instanceof DuplicateLinkError)) throw error;
      }
    }
    if (unavailable) throw unavailable;
    throw new DomainError(ErrorCode.CODE_SPACE_EXHAUSTED, `no free code after ${this.maxAttempts} attempts`);
  }

  /** The URL policy's fixed lists, which a batch's worker threads parse targets with (`prepare`'s `parsedUrl`). */
  targetLists(): { readonly shortDomains: readonly string[]; readonly shorteners: readonly string[] } {
    return this.urls.fixedLists();
  }

  /**
   * Validates a create (domain, URL policy, options, alias) and stores nothing: what single and
   * batch creation share (docs/design.md, "Batch creation").
   */
  async prepare(input: LinkCreation, now = this.clock.now(), parsedUrl?: ParsedTarget): Promise<PreparedLink> {
    const domain = await this.domainFor(input.tenantId, input.domain);
    if (withoutOptions(input)) {
      // Most rows of a batch are a bare URL: every option at the value its check gives an absent
      // field, without the calls, in one object (docs/design.md, "Batch creation"; the spec holds
      // the two paths equal). The checks run in the same order: domain, url, alias. A batch hands
      // `input.url` parsed on its worker thread (`parsedUrl`): only the policy's changing lists are asked here.
      const target = parsedUrl ? await this.urls.checkParsed(parsedUrl, 'url') : await this.urls.check(input.url, 'url');
      const alias = requestedCode(input.alias, input.legacyCode);
      const screened = screening(target.flags, await this.judge([target]));
      const createdAt = new Date(now);
      return {
        targetUrl: target.url,
        redirectType: 302,
        expiresAt: null,
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
        ...screened,
        domain,
        tenantId: input.tenantId,
        createdAt,
        updatedAt: createdAt,
        status: 'active',
        version: 1,
        alias,
      };
    }
    if (input.password != null && input.passwordHash != null)
      throw new DomainError(ErrorCode.VALIDATION_FAILED, 'give password or passwordHash, not both', { field: 'passwordHash' });
    const fields = await this.fields(input, now);
    const alias = requestedCode(input.alias, input.legacyCode);
    const passwordHash = input.passwordHash == null ? fields.passwordHash : checkPasswordHash(input.passwordHash);
    const status = input.status == null ? 'active' : checkStatus(input.status);
    const createdAt = new Date(now);
    const tagConversionParam = await this.tagParamFor(input.tenantId, fields.tags);
    return {
      ...fields,
      ...(tagConversionParam ? { tagConversionParam } : {}),
      passwordHash,
      domain,
      tenantId: input.tenantId,
      createdAt,
      updatedAt: createdAt,
      status,
      version: 1,
      alias,
    };
  }

  /** The click id parameter the tenant's tracked tags give a link with these tags (docs/design.md, "Conversions"). */
  private async tagParamFor(tenantId: string, tags: readonly string[]): Promise<string | null> {
    if (!this.tagTracking || tags.length === 0) return null;
    return withTagTracking({ tags } as Link, await this.trackedTags(tenantId)).tagConversionParam ?? null;
  }

  private trackedTags(tenantId: string): Promise<ReadonlyMap<string, string>> {
    const store = this.tagTracking;
    if (!store) return Promise.resolve(new Map());
    let read = this.trackedReads.get(tenantId);
    if (!read) {
      read = store
        .trackedTags(tenantId)
        .catch((error: unknown) => {
          throw new DomainError(
            ErrorCode.DEPENDENCY_UNAVAILABLE,
            'the tags’ conversion settings are unavailable; retry shortly',
            { retryAfterSeconds: 1 },
            { cause: error },
          );
        })
        .finally(() => this.trackedReads.delete(tenantId));
      this.trackedReads.set(tenantId, read);
    }
    return read;
  }

  /** A tag's conversion settings (off unless switched on). */
  async tagSettings(tenantId: string, tag: unknown): Promise<TagSettings> {
    const { tag: name } = checkTagTracking(tag, { trackConversions: false });
    const param = (await this.trackedTags(tenantId)).get(name);
    return { tag: name, trackConversions: param !== undefined, conversionParam: param ?? DEFAULT_CONVERSION_PARAM };
  }

  /**
   * Switches conversion tracking on or off for a tag (docs/design.md, "Conversions"): stores the
   * setting, then rewrites every link of the tenant that carries the tag whose resolved parameter
   * changes, each as an edit (version, outbox, caches and every redirect instance told, as any edit
   * is). Idempotent: switching again to the same setting rewrites what is not yet resolved (a link
   * tagged while the switch ran).
   */
  async setTagTracking(tenantId: string, tag: unknown, edit: { trackConversions?: unknown; conversionParam?: unknown }): Promise<TagTrackingResult> {
    const checked = checkTagTracking(tag, edit);
    if (!this.tagTracking) throw new DomainError(ErrorCode.VALIDATION_FAILED, 'conversion tracking on tags is not available here', { field: 'tag' });
    let tracked: ReadonlyMap<string, string>;
    try {
      await this.tagTracking.setTagTracking(tenantId, checked.tag, checked.param);
      // Read after the write, not joined to a read in flight (which may have begun before it).
      tracked = await this.tagTracking.trackedTags(tenantId);
    } catch (error) {
      throw new DomainError(
        ErrorCode.DEPENDENCY_UNAVAILABLE,
        'the tags’ conversion settings are unavailable; retry shortly',
        { retryAfterSeconds: 1 },
        { cause: error },
      );
    }
    let linksUpdated = 0;
    let after: { createdAt: Date; id: string } | null = null;
    for (;;) {
      const page = await this.links.listByTenant({ tenantId, after, limit: TAG_PAGE, tag: checked.tag });
      for (const link of page.slice(0, TAG_PAGE)) if (await this.resolveTagTracking(tenantId, link, tracked)) linksUpdated++;
      if (page.length <= TAG_PAGE) break;
      const last = page[TAG_PAGE - 1];
      after = { createdAt: last.createdAt, id: last.id };
    }
    return { tag: checked.tag, trackConversions: checked.param !== null, conversionParam: checked.param ?? DEFAULT_CONVERSION_PARAM, linksUpdated };
  }

  /** Writes a link's parameter from its tags when it changed, as an edit; whether it wrote. */
  private async resolveTagTracking(tenantId: string, read: Link, tracked: ReadonlyMap<string, string>): Promise<boolean> {
    let current: Link | null = read;
    for (let attempt = 0; current && current.tenantId === tenantId && attempt < 5; attempt++) {
      const next = withTagTracking(current, tracked);
      if (next === current) return false;
      const written: Link = { ...next, version: current.version + 1, updatedAt: new Date(this.clock.now()) };
      if (await this.links.replace(written, current.version)) {
        this.observer?.stored([written]);
        await this.events.deliverNow([editedEvent(written)]);
        return true;
      }
      current = await this.links.findByCode({ domain: read.domain, code: read.code }); // edited meanwhile: resolve what is there now
    }
    return false;
  }

  /**
   * Why `tenantId` cannot have an alias, given the link that holds it (null: it was just taken by
   * someone). Another tenant learns only that it is unavailable (docs/design.md, "Security model"):
   * an expired link of someone else answers as a taken alias, so nobody learns when another tenant's
   * link expired or that it did. The tenant's own expired link keeps the detail.
   */
  aliasConflict(tenantId: string, id: ShortUrlIdentifier, existing: Link | null): DomainError {
    if (existing?.status === 'expired' && existing.tenantId === tenantId) {
      const free = new Date((existing.expiresAt?.getTime() ?? this.clock.now()) + this.options.retireForMs);
      const why = `alias "${id.code}" belongs to your expired link and is not handed out again before ${free.toISOString()}`;
      return new DomainError(ErrorCode.ALIAS_RETIRED, why, { alias: id.code, domain: id.domain, availableAt: free.toISOString() });
    }
    return aliasUnavailable(id);
  }

  /**
   * Why `tenantId` cannot have an alias deleted until `until`. A deleted code's quarantine does not
   * keep who deleted it: on a shared domain the alias answers as a taken one, with no date, to every
   * tenant (the date would tell when another tenant deleted a link). On a tenant's own domain only
   * that tenant has links, so it gets the detail (docs/design.md, "Security model").
   */
  aliasRetired(tenantId: string, id: ShortUrlIdentifier, until: Date): DomainError {
    if (this.options.sharedDomains.includes(id.domain)) return aliasUnavailable(id);
    const why = `alias "${id.code}" was deleted recently and is not handed out again before ${until.toISOString()}`;
    return new DomainError(ErrorCode.ALIAS_RETIRED, why, { alias: id.code, domain: id.domain, availableAt: until.toISOString() });
  }

  async get(tenantId: string, id: ShortUrlIdentifier): Promise<Link> {
    const link = await this.links.findByCode(id);
    // Another tenant's link is reported as absent, so codes of other tenants cannot be probed.
    if (!link || link.tenantId !== tenantId) throw unknownLink(id);
    return link;
  }

  /**
   * A page of the tenant's links, newest first (creation time, then id) over every shard, with a
   * sealed cursor bound to the tenant and the filters (docs/design.md, "Listing").
   */
  async list(tenantId: string, request: LinkListRequest): Promise<LinkPage> {
    const filters = {
      q: request.q ?? '',
      tag: request.tag ?? '',
      status: request.status ?? '',
      domain: request.domain ?? '',
      ...(request.health ? { health: request.health } : {}),
    };
    const after = request.cursor ? this.cursors.open(tenantId, filters, request.cursor) : null;
    const links = await this.links.listByTenant({
      tenantId,
      after,
      limit: request.limit,
      status: request.status,
      domain: request.domain?.toLowerCase(),
      tag: request.tag,
      search: request.q,
      health: request.health,
    });
    const page = links.slice(0, request.limit);
    const last = page[page.length - 1];
    const nextCursor = links.length > request.limit ? this.cursors.seal(tenantId, filters, { createdAt: last.createdAt, id: last.id }) : null;
    return { links: page, nextCursor };
  }

  /** The tenant's tags, each once, in order: what its links use now (a tag goes with its last link), at most MAX_TAGS_LISTED. */
  tags(tenantId: string): Promise<string[]> {
    return this.links.tagsOf(tenantId, MAX_TAGS_LISTED);
  }

  async update(tenantId: string, id: ShortUrlIdentifier, edit: LinkEdit, ifMatch: number | null): Promise<Link> {
    return (await this.updateWithPrevious(tenantId, id, edit, ifMatch)).after;
  }

  /** An edit, with the link it replaced: what the audit log's diff is made of (docs/design.md, "Audit log"). */
  async updateWithPrevious(tenantId: string, id: ShortUrlIdentifier, edit: LinkEdit, ifMatch: number | null): Promise<LinkUpdate> {
    for (let attempt = 0; ; attempt++) {
      const current = await this.get(tenantId, id);
      if (ifMatch !== null && current.version !== ifMatch) throw stale(current);
      const next = await this.applied(current, edit);
      if (await this.links.replace(next, current.version)) {
        this.observer?.stored([next]);
        await this.events.deliverNow([editedEvent(next)]);
        return { before: current, after: next };
      }
      // Changed by someone else between the read and the write: with If-Match that is the client's
      // conflict; without, apply the edit again to what is there now.
      if (ifMatch !== null || attempt >= 4) throw stale((await this.links.findByCode(id)) ?? current);
    }
  }

  async remove(tenantId: string, id: ShortUrlIdentifier, ifMatch: number | null): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const current = await this.get(tenantId, id);
      if (ifMatch !== null && current.version !== ifMatch) throw stale(current);
      const retiredUntil = new Date(this.clock.now() + this.options.retireForMs);
      if (await this.links.remove(id, current.version, retiredUntil)) {
        this.observer?.removed(current);
        await this.events.deliverNow([deletedEvent(current)]);
        return;
      }
      if (ifMatch !== null || attempt >= 4) throw stale((await this.links.findByCode(id)) ?? current);
    }
  }

  /** Operators: flag (warning page) or ban (blocked page) any link, or clear it again. */
  async moderate(id: ShortUrlIdentifier, moderation: Moderation, reason: string | null, source: ModerationSource = 'operator'): Promise<Link> {
    return (await this.moderateWithPrevious(id, moderation, reason, source)).after;
  }

  /** A moderation, with the link it replaced (the operator log's diff). `source`: who decided (an operator unless said). */
  async moderateWithPrevious(
    id: ShortUrlIdentifier,
    moderation: Moderation,
    reason: string | null,
    source: ModerationSource = 'operator',
  ): Promise<LinkUpdate> {
    for (let attempt = 0; ; attempt++) {
      const current = await this.links.findByCode(id);
      if (!current) throw unknownLink(id);
      const next: Link = {
        ...current,
        moderation,
        moderationReason: moderation === 'clear' ? null : reason,
        moderationSource: source,
        version: current.version + 1,
        updatedAt: new Date(this.clock.now()),
      };
      if (await this.links.replace(next, current.version)) {
        await this.events.deliverNow([editedEvent(next)]);
        return { before: current, after: next };
      }
      if (attempt >= 4) throw stale(current);
    }
  }

  /**
   * A verdict found against a live link (a feed that changed, a scheduled screening: docs/design.md,
   * "Trust and safety"): applied, like an operator's moderation, when it is stronger than the link's
   * moderation and no operator decided the link. `linkId` guards against a link deleted and made
   * again under the same code meanwhile. Null: nothing changed.
   */
  async escalate(id: ShortUrlIdentifier, linkId: string, verdict: ReputationVerdict): Promise<LinkUpdate | null> {
    for (let attempt = 0; ; attempt++) {
      const current = await this.links.findByCode(id);
      if (!current || current.id !== linkId) return null;
      if (current.moderationSource === 'operator' || MODERATION_RANK[current.moderation] >= MODERATION_RANK[verdict.state]) return null;
      const next: Link = {
        ...current,
        moderation: verdict.state,
        moderationReason: verdict.reason,
        moderationSource: verdict.source as ModerationSource,
        version: current.version + 1,
        updatedAt: new Date(this.clock.now()),
      };
      if (await this.links.replace(next, current.version)) {
        await this.events.deliverNow([editedEvent(next)]);
        return { before: current, after: next };
      }
      if (attempt >= 4) return null;
    }
  }

  /**
   * What the dead-link checks found of a link (docs/design.md, "Trust and safety"). A change the
   * redirect acts on (which targets are broken) is written like an edit: a new version into the
   * caches and to every redirect instance. Any other (a first check that found it fine, its time,
   * its status) is written without a version: the health is not part of the link's version (its
   * ETag), as the tenant did not change anything. Null when the link is gone (or is another link
   * now), or when it kept changing meanwhile (the next check writes it).
   */
  async recordHealth(id: ShortUrlIdentifier, linkId: string, health: LinkHealth): Promise<LinkUpdate | null> {
    for (let attempt = 0; attempt < 4; attempt++) {
      const current = await this.links.findByCode(id);
      if (!current || current.id !== linkId) return null;
      if (sameTargets(current.health?.brokenTargets ?? [], health.brokenTargets)) {
        const after: Link = { ...current, health };
        if (await this.links.recordHealth(after, current.version)) return { before: current, after };
        continue;
      }
      const next: Link = { ...current, health, version: current.version + 1 };
      if (await this.links.replace(next, current.version)) {
        await this.events.deliverNow([editedEvent(next)]);
        return { before: current, after: next };
      }
    }
    return null;
  }

  /**
   * The expiry job: marks links past their expiry `expired` on every shard (the redirect already
   * answers 410 by itself) and removes those whose quarantine is over, so their alias is free again.
   */
  async expireDue(batch = 500): Promise<{ expired: number; purged: number }> {
    const now = new Date(this.clock.now());
    const marked = await this.links.expireDue(now, batch);
    await this.events.deliverNow(marked.map(editedEvent));
    const expired = marked.length;
    const purged = await this.links.purgeExpired(new Date(now.getTime() - this.options.retireForMs), batch);
    return { expired, purged };
  }

  private async domainFor(tenantId: string, value: unknown): Promise<string> {
    if (value === undefined || value === null) return this.options.defaultDomain;
    if (typeof value !== 'string' || value.length > 253) throw new DomainError(ErrorCode.VALIDATION_FAILED, 'domain must be a host name', { field: 'domain' });
    const domain = value.toLowerCase();
    if (this.options.sharedDomains.includes(domain) || (await this.tenantDomains.owns(tenantId, domain))) return domain;
    throw new DomainError(ErrorCode.DOMAIN_NOT_ALLOWED, `domain "${domain}" is not one of this service's domains nor one of yours`, {
      field: 'domain',
      domain,
    });
  }

  /** Every field of a create, validated; any URL the policy flags, or the reputation holds against, flags (or bans) the link. */
  private async fields(input: LinkCreation, now: number) {
    const { url, flags, checked } = this.targetCheck();
    const targetUrl = await url(input.url, 'url');
    const password = checkPassword(input.password);
    const fields = {
      targetUrl,
      redirectType: checkRedirectType(input.redirectType),
      expiresAt: checkExpiresAt(input.expiresAt, now),
      title: checkTitle(input.title),
      tags: checkTags(input.tags),
      maxClicks: checkMaxClicks(input.maxClicks),
      passwordHash: password === null ? null : await this.passwords.hash(password),
      utm: checkUtm(input.utm),
      forwardQuery: checkForwardQuery(input.forwardQuery),
      // In a create, a null shorthand is no shorthand (there are no rules of its kind to remove but those given).
      redirectRules: await rulesWithShorthand(
        null,
        { redirectRules: input.redirectRules, geoTargets: input.geoTargets ?? undefined, deviceTargets: input.deviceTargets ?? undefined },
        url,
      ),
      variants: await checkVariants(input.variants, url),
      clicksPerIpPerMinute: checkClicksPerIpPerMinute(input.clicksPerIpPerMinute),
      crawlable: checkCrawlable(input.crawlable),
      passwordRememberHours: checkPasswordRememberHours(input.passwordRememberHours),
      social: await checkSocial(input.social, url),
      appTargets: await checkAppTargets(input.appTargets, url),
      trackConversions: checkTrackConversions(input.trackConversions),
      conversionParam: checkConversionParam(input.conversionParam),
    };
    return { ...fields, ...screening(flags(), await this.judge(checked())) };
  }

  /** The reputation's verdict on one request's targets, or null (none configured, nothing known). */
  private async judge(targets: readonly CheckedUrl[]): Promise<ReputationVerdict | null> {
    return this.reputation && targets.length ? this.reputation.judge(targets) : null;
  }

  /**
   * The check of every target of one request: the whole URL policy, DNS included when it is on, for
   * `url` and the targets of options alike (docs/design.md, "URL safety"). `flags` lists what the
   * policy flagged, in the order the targets were given.
   */
  private targetCheck(): { url: UrlCheck; flags: () => UrlFlag[]; checked: () => CheckedUrl[] } {
    const lookups: HostLookups = new Map();
    const found: Array<CheckedUrl | null> = [];
    const url: UrlCheck = async (raw, field) => {
      const slot = found.push(null) - 1;
      const checked = await this.urls.check(raw, field, lookups);
      found[slot] = checked;
      return checked.url;
    };
    const all = () => found.filter((c): c is CheckedUrl => c !== null);
    return { url, flags: () => all().flatMap((c) => c.flags), checked: all };
  }

  /** The link after an edit: absent fields unchanged, null resets a field to its default. */
  private async applied(current: Link, edit: LinkEdit): Promise<Link> {
    const has = (field: keyof LinkEdit) => Object.prototype.hasOwnProperty.call(edit, field) && edit[field] !== undefined;
    const { url, flags: flagged, checked } = this.targetCheck();
    let next: Link = { ...current };
    if (has('url')) {
      if (edit.url === null) throw new DomainError(ErrorCode.VALIDATION_FAILED, 'url cannot be cleared', { field: 'url' });
      next = { ...next, targetUrl: await url(edit.url, 'url') };
    }
    if (has('title')) next = { ...next, title: checkTitle(edit.title) };
    if (has('tags')) {
      next = { ...next, tags: checkTags(edit.tags) };
      // A tag added or removed may switch tracking on or off (docs/design.md, "Conversions").
      if (this.tagTracking) next = withTagTracking(next, await this.trackedTags(current.tenantId));
    }
    if (has('maxClicks')) next = { ...next, maxClicks: checkMaxClicks(edit.maxClicks) };
    if (has('password')) {
      const password = checkPassword(edit.password);
      next = { ...next, passwordHash: password === null ? null : await this.passwords.hash(password) };
    }
    if (has('utm')) next = { ...next, utm: checkUtm(edit.utm) };
    if (has('forwardQuery')) next = { ...next, forwardQuery: checkForwardQuery(edit.forwardQuery) };
    if (has('redirectRules') || has('geoTargets') || has('deviceTargets')) {
      const given = (field: 'redirectRules' | 'geoTargets' | 'deviceTargets') => (has(field) ? edit[field] : undefined);
      const input = { redirectRules: given('redirectRules'), geoTargets: given('geoTargets'), deviceTargets: given('deviceTargets') };
      next = { ...next, redirectRules: await rulesWithShorthand(has('redirectRules') ? null : current.redirectRules, input, url) };
    }
    if (has('variants')) next = { ...next, variants: await checkVariants(edit.variants, url) };
    if (has('clicksPerIpPerMinute')) next = { ...next, clicksPerIpPerMinute: checkClicksPerIpPerMinute(edit.clicksPerIpPerMinute) };
    if (has('crawlable')) next = { ...next, crawlable: checkCrawlable(edit.crawlable) };
    if (has('social')) next = { ...next, social: await checkSocial(edit.social, url) };
    if (has('appTargets')) next = { ...next, appTargets: await checkAppTargets(edit.appTargets, url) };
    if (has('trackConversions')) next = { ...next, trackConversions: checkTrackConversions(edit.trackConversions) };
    if (has('conversionParam')) next = { ...next, conversionParam: checkConversionParam(edit.conversionParam) };
    if (has('passwordRememberHours')) next = { ...next, passwordRememberHours: checkPasswordRememberHours(edit.passwordRememberHours) };
    if (has('expiresAt')) next = { ...next, expiresAt: checkExpiresAt(edit.expiresAt, this.clock.now()) };
    if (has('redirectType')) next = { ...next, redirectType: checkRedirectType(edit.redirectType) };
    if (has('status')) {
      if (current.status === 'expired' && edit.status === 'active' && !has('expiresAt')) {
        throw new DomainError(ErrorCode.VALIDATION_FAILED, 'an expired link becomes active again only with a new expiresAt (or null)', { field: 'status' });
      }
      next = { ...next, status: checkStatus(edit.status) };
    } else if (current.status === 'expired' && has('expiresAt')) {
      next = { ...next, status: 'active' }; // a new expiry (or none) revives the link
    }
    // A newly flagged URL (or one the reputation holds against) flags or bans the link when that is
    // stronger than its moderation; nothing an edit sets lifts a flag or a ban, an operator's or not.
    const screened = screening(flagged(), await this.judge(checked()));
    if (MODERATION_RANK[screened.moderation] > MODERATION_RANK[next.moderation]) next = { ...next, ...screened };
    return { ...next, version: current.version + 1, updatedAt: new Date(this.clock.now()) };
  }

  private async aliasTaken(tenantId: string, id: ShortUrlIdentifier): Promise<DomainError> {
    return this.aliasConflict(tenantId, id, await this.links.findByCode(id).catch(() => null));
  }

  private async nextId(): Promise<bigint> {
    try {
      return await this.ids.nextId();
    } catch (error) {
      throw new DomainError(ErrorCode.DEPENDENCY_UNAVAILABLE, 'the id sequence is unavailable; retry shortly', { retryAfterSeconds: 1 }, { cause: error });
    }
  }

  private async afterCreate(link: Link): Promise<Link> {
    await this.announceCreated([link]);
    return link;
  }

  /**
   * New links, single or a batch's: a scan may have left a "no such link" entry for their codes, and
   * the Bloom filter learns them (their events, delivered now and by the outbox relay); the safety
   * index learns their targets (docs/design.md, "Trust and safety"). Those marked crawlable change
   * their domain's robots.txt: told to every redirect instance like an edit (docs/design.md, "Domain
   * settings"), best effort: an instance that missed it reads robots.txt again within its L1 TTL.
   */
  async announceCreated(links: readonly Link[]): Promise<void> {
    if (links.length) this.observer?.stored(links);
    await this.events.deliverNow(links.map(createdEvent));
    const crawlable = links.filter((l) => l.crawlable);
    if (crawlable.length) await this.events.deliverNow(crawlable.map(editedEvent));
  }
}

/**
 * True when no option is given (each absent or null: its default): every field of LinkCreation
 * but tenantId, url, alias, legacyCode and domain. Named reads, not a loop over field names (a keyed read per
 * field was ~4 % of a batch's CPU).
 */
function withoutOptions(i: LinkCreation): boolean {
  return (
    i.redirectType == null &&
    i.expiresAt == null &&
    i.title == null &&
    i.tags == null &&
    i.maxClicks == null &&
    i.password == null &&
    i.utm == null &&
    i.forwardQuery == null &&
    i.redirectRules == null &&
    i.geoTargets == null &&
    i.deviceTargets == null &&
    i.variants == null &&
    i.clicksPerIpPerMinute == null &&
    i.status == null &&
    i.passwordHash == null &&
    i.crawlable == null &&
    i.passwordRememberHours == null &&
    i.social == null &&
    i.appTargets == null &&
    i.trackConversions == null &&
    i.conversionParam == null
  );
}

/**
 * The rules of a create or an edit (docs/design.md, "Redirect rules"): `redirectRules` when given
 * (replacing `current`), then the shorthand `geoTargets` and `deviceTargets` over them, each
 * replacing the rules of its kind in place. A shorthand that is absent leaves its rules alone; null
 * removes them.
 */
async function rulesWithShorthand(
  current: readonly RedirectRule[] | null,
  input: { readonly redirectRules?: unknown; readonly geoTargets?: unknown; readonly deviceTargets?: unknown },
  url: UrlCheck,
): Promise<RedirectRule[] | null> {
  const [rules, geo, devices] = await Promise.all([
    input.redirectRules === undefined ? current : checkRedirectRules(input.redirectRules, url),
    checkGeoTargets(input.geoTargets, url),
    checkDeviceTargets(input.deviceTargets, url),
  ]);
  let next = rules === null ? null : [...rules];
  if (input.geoTargets !== undefined) next = withShorthand(next, 'country', geo);
  if (input.deviceTargets !== undefined) next = withShorthand(next, 'device', devices);
  if ((next?.length ?? 0) > RULE_LIMITS.rules)
    throw new DomainError(ErrorCode.VALIDATION_FAILED, `redirectRules may hold at most ${RULE_LIMITS.rules} rules`, { field: 'redirectRules' });
  return next;
}

const MODERATION_RANK: Readonly<Record<Moderation, number>> = { clear: 0, flagged: 1, banned: 2 };

/**
 * A link's moderation from what its targets were found to be (docs/design.md, "Trust and safety"):
 * the reputation's verdict, else the URL policy's first flag, else clear; the stronger wins.
 */
function screening(flags: readonly UrlFlag[], verdict: ReputationVerdict | null): Pick<Link, 'moderation' | 'moderationReason' | 'moderationSource'> {
  const flag = flags[0];
  const policy: ReputationVerdict | null = flag ? { state: 'flagged', reason: `${flag.reason}: ${flag.detail}`, source: 'url-policy' } : null;
  const decided = strongerVerdict(verdict, policy);
  if (decided === null) return { moderation: 'clear', moderationReason: null, moderationSource: null };
  return { moderation: decided.state, moderationReason: decided.reason, moderationSource: decided.source as ModerationSource };
}

const sameTargets = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((t) => b.includes(t));

/** An alias held by a link, or kept out of use, as any tenant but its holder learns it: unavailable, nothing more. */
const aliasUnavailable = (id: ShortUrlIdentifier) =>
  new DomainError(ErrorCode.ALIAS_TAKEN, `alias "${id.code}" is already taken on ${id.domain}`, { alias: id.code, domain: id.domain });
/** Codes chosen again at most, per create, because their shard was unavailable (each costs an id). */
const MAX_RELOCATIONS = 32;

const stale = (current: Link) =>
  new DomainError(ErrorCode.PRECONDITION_FAILED, `the link changed since you read it (now version ${current.version}); read it again and retry`, {
    currentVersion: current.version,
  });
