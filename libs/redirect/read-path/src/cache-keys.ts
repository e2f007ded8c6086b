import type { ShortUrlIdentifier } from '@shortlink/links-domain';

/** Every key and channel of the shared cache starts with this (docs/design.md, "Keys in the shared cache"). */
const PREFIX = 'short:';

/**
 * Every key the platform keeps in the shared cache (Redis Cluster, or its in-process twin), in one
 * place and under one prefix; the list is in docs/design.md, "Keys in the shared cache". Link keys
 * carry no hash tag on purpose: they must spread over every slot of a cluster.
 */
export const CacheKeys = {
  /** A link's cached value (the redirect caching article's `short:link:{code}`, host-aware). */
  link: (id: ShortUrlIdentifier): string => `${PREFIX}link:${id.domain}:${id.code}`,
  /** The stampede lock of one link's shard look-up. */
  linkLock: (id: ShortUrlIdentifier): string => `${PREFIX}lock:${id.domain}:${id.code}`,
  /** The Bloom filter's layout: its generations, their sizes and states (JSON with a version); `space` only in tests. */
  bloomLayout: (space = ''): string => `${PREFIX}bloom:${space}layout`,
  /** One bitmap (partition) of one generation of the Bloom filter of existing links. */
  bloomPartition: (generation: string, partition: number): string => `${PREFIX}bloom:links:${generation}:${partition}`,
  /** A partition of the single-generation filter the platform had before generations: deleted by the first rebuild. */
  legacyBloomPartition: (partition: number): string => `${PREFIX}bloom:links:${partition}`,
  /** Held by the instance that changes the Bloom filter's layout (a rebuild, or a new generation). */
  bloomRebuildLock: (space = ''): string => `${PREFIX}lock:bloom-rebuild${space ? `:${space}` : ''}`,
  /**
   * A link's maxClicks counter, by link id (a recreated alias starts at 0): a hash of the clicks used
   * and the leases the redirect instances hold (docs/design.md, "Max clicks").
   */
  clickQuota: (linkId: string): string => `${PREFIX}click-quota:${linkId}`,
  /** Password attempts of one visitor (client address) on one link. */
  passwordAttempts: (linkId: string, address: string): string => `${PREFIX}password-attempts:${linkId}:${address}`,
  /** One visitor's (client address's) redirects of one link in one window (`floor(time / 60 s)`) of its per-visitor limit. */
  visitorWindow: (linkId: string, address: string, window: number): string => `${PREFIX}visitor-clicks:${linkId}:${address}:${window}`,
  /** Redirects of every instance in one second (the global rate limit). */
  redirectsInSecond: (second: number): string => `${PREFIX}ratelimit:global:${second}`,
  /** A plan window of the tenants domain (`rl:req:<tenant>`, `rl:rows:<tenant>`), one hash-tagged key. */
  planWindow: (window: string): string => `{${PREFIX}${window}}`,
  /** A set of concurrency slots of the tenants domain (`slots:batch:<tenant>`), one hash-tagged key. */
  slots: (set: string): string => `{${PREFIX}${set}}`,
  /** The pub/sub channel of link changes (a channel, not a key; cluster-wide). */
  linkChanges: `${PREFIX}link-changes`,
} as const;
