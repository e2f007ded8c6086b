import type { LRUCache } from 'lru-cache';
import { boundedLru } from '@shortlink/core';
import { murmur32 } from '@shortlink/shard-router';
import { DeviceTarget, deviceTargetOf, GeoLookup } from '@shortlink/visitors-domain';
import { CachedLink } from '../cached-link';
import { compileTarget, CompiledTarget, withForwardedQuery } from './target-url';
import { VisitorLimit } from './visitor-limit';

/** What the rules of a link look at in a request. */
export interface RedirectRequest {
  /** The client address (X-Forwarded-For believed only from TRUSTED_PROXIES). */
  readonly address: string;
  readonly userAgent: string;
  /** The raw query string, without `?`; undefined when there is none. */
  readonly query: string | undefined;
  /** A GET counts as a click (and against the visitor limit); a HEAD answers the same without counting. */
  readonly counts: boolean;
  /** The visitor followed the continue link of a flagged link's warning page (`/{code}/go`). */
  readonly acknowledged: boolean;
  /** The link's password was checked and accepted for this request. */
  readonly passwordAccepted: boolean;
}

/** The answer to a request for a live link (status and expiry were checked by the read path). */
export type RedirectDecision =
  | { readonly kind: 'blocked' }
  | { readonly kind: 'warning' }
  | { readonly kind: 'exhausted' }
  | { readonly kind: 'password' }
  | { readonly kind: 'limited'; readonly retryAfterSeconds: number }
  /** `reserve`: a click must be taken from the link's maxClicks before answering. */
  | {
      readonly kind: 'redirect';
      readonly location: string;
      readonly variant: number | null;
      readonly reserve: boolean;
      /**
       * The app URL scheme of the visitor's device (`myapp://…`, appTargets): `location` is then the
       * fallback, and a browser gets the app page instead of the redirect (docs/design.md, "Link options").
       */
      readonly app?: string;
    };

/** What the rules need to know of the maxClicks counter without waiting (ClickQuota). */
export interface ExhaustionView {
  isKnownExhausted(link: CachedLink): boolean;
}

/** A link's rules taken apart once, kept as long as its cached value is. */
interface Compiled {
  readonly targets: Map<string, CompiledTarget>;
  readonly variantEnds: readonly number[] | null;
  readonly variantSeed: number;
}

export interface LinkRulesOptions {
  /** The per-link visitor limit, shared with the other instances (default: this instance's own windows only). */
  readonly visitors?: VisitorLimit;
  /** Distinct user agents whose device target is kept. */
  readonly userAgents?: number;
  /** Client addresses whose country is kept. */
  readonly addresses?: number;
}

/** Longest part of a user agent that is looked at (device, visitor key): real agents are far shorter. */
const MAX_AGENT = 512;

/**
 * Where a request for a link goes (docs/design.md, "Link options"), in this order: moderation
 * (banned: blocked page; flagged: warning page until the visitor continues) → max clicks → password
 * → per-link visitor limit → geo target → device target → weighted variant → UTM parameters → query
 * forwarding; then the app target of the visitor's device, for which what came before is the fallback.
 * Synchronous: the per-visitor limit is decided here on what this instance knows (VisitorLimit, which
 * merges with the other instances in the background), and the caller takes the counter of maxClicks
 * when `reserve` says so, after everything else has passed, so a refused request never uses up a click.
 */
export class LinkRules {
  private readonly compiled = new WeakMap<CachedLink, Compiled>();
  private readonly devices: LRUCache<string, DeviceTarget>;
  /** Address -> country ('' for none): a lookup walks the database's tree, a few µs per request. */
  private readonly countries: LRUCache<string, string>;
  private readonly visitors: VisitorLimit;

  constructor(
    private readonly geo: GeoLookup,
    private readonly exhaustion: ExhaustionView,
    options: LinkRulesOptions = {},
  ) {
    this.devices = boundedLru({ maxEntries: options.userAgents ?? 10_000 });
    this.countries = boundedLru({ maxEntries: options.addresses ?? 10_000 });
    this.visitors = options.visitors ?? new VisitorLimit(null);
  }

  decide(link: CachedLink, req: RedirectRequest, now = Date.now()): RedirectDecision {
    if (link.moderation === 'banned') return BLOCKED;
    if (link.moderation === 'flagged' && !req.acknowledged) return WARNING;
    const rules = link.rules;
    const compiled = this.compile(link);
    if (rules === undefined) return { kind: 'redirect', location: this.locationFor(compiled, link, link.targetUrl, req.query), variant: null, reserve: false };
    if (rules.maxClicks !== undefined && this.exhaustion.isKnownExhausted(link)) return EXHAUSTED;
    if (rules.passwordHash !== undefined && !req.passwordAccepted) return PASSWORD;
    if (rules.clicksPerIpPerMinute !== undefined) {
      const seen = this.visitors.hit(link.id, req.address, rules.clicksPerIpPerMinute, req.counts, now);
      if (!seen.allowed) return { kind: 'limited', retryAfterSeconds: seen.retryAfterSeconds };
    }
    let target: string | undefined;
    let variant: number | null = null;
    if (rules.geoTargets !== undefined) {
      const country = this.countryOf(req.address);
      if (country !== '') target = rules.geoTargets[country];
    }
    // The device is looked up only when a device-dependent option needs it, exactly as before app targets.
    let device: DeviceTarget | undefined;
    if (target === undefined && rules.deviceTargets !== undefined) target = rules.deviceTargets[(device = this.deviceOf(req.userAgent))];
    if (target === undefined && rules.variants !== undefined && compiled.variantEnds !== null) {
      variant = pickVariant(compiled.variantEnds, visitorKey(req.address, req.userAgent), compiled.variantSeed);
      target = rules.variants[variant].url;
    }
    const query = rules.forwardQuery === false ? undefined : req.query;
    const reserve = req.counts && rules.maxClicks !== undefined;
    let app: string | undefined;
    if (rules.appTargets !== undefined) {
      device ??= this.deviceOf(req.userAgent);
      if (device !== 'desktop') app = rules.appTargets[device];
    }
    if (app !== undefined) {
      // A universal link or app link is the redirect itself: the OS opens the app, or the browser the web page.
      if (app.startsWith('https:')) return { kind: 'redirect', location: this.locationFor(compiled, link, app, query), variant: null, reserve };
      const location = this.locationFor(compiled, link, target ?? link.targetUrl, query);
      return { kind: 'redirect', location, variant, reserve, app };
    }
    const location = this.locationFor(compiled, link, target ?? link.targetUrl, query);
    return { kind: 'redirect', location, variant, reserve };
  }

  /** The device target of a user agent, parsed once per distinct agent. */
  deviceOf(userAgent: string): DeviceTarget {
    const key = userAgent.length > MAX_AGENT ? userAgent.slice(0, MAX_AGENT) : userAgent;
    let device = this.devices.get(key);
    if (device === undefined) {
      device = deviceTargetOf(key);
      this.devices.set(key, device);
    }
    return device;
  }

  private countryOf(address: string): string {
    let country = this.countries.get(address);
    if (country === undefined) {
      country = this.geo.countryOf(address) ?? '';
      this.countries.set(address, country);
    }
    return country;
  }

  private locationFor(compiled: Compiled, link: CachedLink, url: string, query: string | undefined): string {
    let target = compiled.targets.get(url);
    if (target === undefined) {
      target = compileTarget(url, link.rules?.utm);
      compiled.targets.set(url, target);
    }
    return withForwardedQuery(target, query);
  }

  private compile(link: CachedLink): Compiled {
    let c = this.compiled.get(link);
    if (c === undefined) {
      const variants = link.rules?.variants;
      c = { targets: new Map(), variantEnds: variants?.length ? cumulative(variants.map((v) => v.weight)) : null, variantSeed: murmur32(link.id) };
      this.compiled.set(link, c);
    }
    return c;
  }
}

const BLOCKED: RedirectDecision = { kind: 'blocked' };
const WARNING: RedirectDecision = { kind: 'warning' };
const EXHAUSTED: RedirectDecision = { kind: 'exhausted' };
const PASSWORD: RedirectDecision = { kind: 'password' };

/** Running sums of the weights: variant i takes the buckets [ends[i-1], ends[i]). */
export function cumulative(weights: readonly number[]): number[] {
  let sum = 0;
  return weights.map((w) => (sum += w));
}

/** The visitor, for sticky variants: client address and user agent (docs/design.md, "Link options"). */
export const visitorKey = (address: string, userAgent: string): string =>
  `${address}\u0000${userAgent.length > MAX_AGENT ? userAgent.slice(0, MAX_AGENT) : userAgent}`;

/**
 * The variant of a visitor: the hash of the visitor key (seeded per link, so one visitor's
 * variants of different links are unrelated) modulo the total weight, placed on the running sums.
 * The same visitor always lands in the same bucket, on every instance.
 */
export function pickVariant(ends: readonly number[], key: string, seed: number): number {
  const bucket = murmur32(key, seed) % ends[ends.length - 1];
  let i = 0;
  while (bucket >= ends[i]) i++;
  return i;
}
