import { murmur32 } from '@shortlink/shard-router';
import { DeviceTarget, GeoLocator } from '@shortlink/visitors-domain';
import { compileRules, CompiledRules, MAX_AGENT, RuleMatcher, RuleRequest } from './rule-engine';
import { compileTarget, CompiledTarget, withForwardedQuery } from './target-url';
import { VisitorLimit } from './visitor-limit';
import { CachedLink, rulesFromTargets } from '@shortlink/links-domain';

/** What the rules of a link look at in a request. */
export interface RedirectRequest extends RuleRequest {
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
      /**
       * The target chosen is one the dead-link checks found broken (docs/design.md, "Trust and
       * safety"): the visitor meets the tenant's fallback, if it set one. Never past `/go`.
       */
      readonly broken?: true;
    };

/** What the rules need to know of the maxClicks counter without waiting (ClickQuota). */
export interface ExhaustionView {
  isKnownExhausted(link: CachedLink): boolean;
}

/** A link's rules taken apart once, kept as long as its cached value is. */
interface Compiled {
  readonly targets: Map<string, CompiledTarget>;
  /** The redirect rules (those of a value cached before rules existed: its country and device targets); null: none. */
  readonly rules: CompiledRules | null;
  readonly variantEnds: readonly number[] | null;
  readonly variantSeed: number;
}

export interface LinkRulesOptions {
  /** The per-link visitor limit, shared with the other instances (default: this instance's own windows only). */
  readonly visitors?: VisitorLimit;
  /** Distinct user agents whose platform is kept. */
  readonly userAgents?: number;
  /** Client addresses whose place is kept. */
  readonly addresses?: number;
}

/**
 * Where a request for a link goes (docs/design.md, "Link options"), in this order: moderation
 * (banned: blocked page; flagged: warning page until the visitor continues) → max clicks → password
 * → per-link visitor limit → redirect rules (the first whose conditions all hold; country and device
 * targets are rules) → weighted variant → UTM parameters → query forwarding; then the app target of
 * the visitor's device, for which what came before is the fallback.
 * Synchronous: the per-visitor limit is decided here on what this instance knows (VisitorLimit, which
 * merges with the other instances in the background), and the caller takes the counter of maxClicks
 * when `reserve` says so, after everything else has passed, so a refused request never uses up a click.
 */
export class LinkRules {
  private readonly compiled = new WeakMap<CachedLink, Compiled>();
  /** Evaluates the conditions; the platform of a user agent and the place of an address are kept per distinct value. */
  private readonly matcher: RuleMatcher;
  private readonly visitors: VisitorLimit;

  constructor(
    geo: GeoLocator,
    private readonly exhaustion: ExhaustionView,
    options: LinkRulesOptions = {},
  ) {
    this.matcher = new RuleMatcher(geo, { userAgents: options.userAgents, addresses: options.addresses });
    this.visitors = options.visitors ?? new VisitorLimit(null);
  }

  decide(link: CachedLink, req: RedirectRequest, now = Date.now()): RedirectDecision {
    if (link.moderation === 'banned') return BLOCKED;
    if (link.moderation === 'flagged' && !req.acknowledged) return WARNING;
    const rules = link.rules;
    const compiled = this.compile(link);
    if (rules === undefined) {
      const location = this.locationFor(compiled, link, link.targetUrl, req.query);
      return brokenFor(link, link.targetUrl, req)
        ? { kind: 'redirect', location, variant: null, reserve: false, broken: true }
        : { kind: 'redirect', location, variant: null, reserve: false };
    }
    if (rules.maxClicks !== undefined && this.exhaustion.isKnownExhausted(link)) return EXHAUSTED;
    if (rules.passwordHash !== undefined && !req.passwordAccepted) return PASSWORD;
    if (rules.clicksPerIpPerMinute !== undefined) {
      const seen = this.visitors.hit(link.id, req.address, rules.clicksPerIpPerMinute, req.counts, now);
      if (!seen.allowed) return { kind: 'limited', retryAfterSeconds: seen.retryAfterSeconds };
    }
    let variant: number | null = null;
    // Each fact a condition reads (platform, place, languages, query) is worked out only when one reads it.
    let target = compiled.rules === null ? undefined : this.matcher.targetOf(compiled.rules, req, now);
    let device: DeviceTarget | undefined;
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
      if (app.startsWith('https:')) {
        const location = this.locationFor(compiled, link, app, query);
        return withBroken({ kind: 'redirect', location, variant: null, reserve }, brokenFor(link, app, req));
      }
      const location = this.locationFor(compiled, link, target ?? link.targetUrl, query);
      return withBroken({ kind: 'redirect', location, variant, reserve, app }, brokenFor(link, target ?? link.targetUrl, req));
    }
    const location = this.locationFor(compiled, link, target ?? link.targetUrl, query);
    return withBroken({ kind: 'redirect', location, variant, reserve }, brokenFor(link, target ?? link.targetUrl, req));
  }

  /** The device of a user agent (iOS, Android, or desktop for every other platform), parsed once per distinct agent. */
  deviceOf(userAgent: string): DeviceTarget {
    const os = this.matcher.platformOf(userAgent).os;
    return os === 'ios' || os === 'android' ? os : 'desktop';
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
      const redirectRules = link.rules?.redirectRules ?? rulesFromTargets(link.rules?.geoTargets, link.rules?.deviceTargets);
      c = {
        targets: new Map(),
        rules: redirectRules?.length ? compileRules(redirectRules) : null,
        variantEnds: variants?.length ? cumulative(variants.map((v) => v.weight)) : null,
        variantSeed: murmur32(link.id),
      };
      this.compiled.set(link, c);
    }
    return c;
  }
}

/** Whether `target` is one of the link's broken targets, for a visitor who has not chosen to go on (`/go`). */
const brokenFor = (link: CachedLink, target: string, req: RedirectRequest): boolean =>
  link.broken !== undefined && !req.acknowledged && link.broken.includes(target);

const withBroken = (decision: RedirectDecision & { kind: 'redirect' }, broken: boolean): RedirectDecision =>
  broken ? { ...decision, broken: true } : decision;

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
