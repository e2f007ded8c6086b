import { Link, ShortUrlIdentifier } from '../link';

/**
 * The platform's after-commit events of links (docs/design.md, "Edits reach every instance"): what
 * a change did, by ids and version only. A shard store writes one into its outbox in the
 * transaction of the change; a relay hands it to the consumers after the commit.
 */
export type LinkEventKind = 'link.created' | 'link.edited' | 'link.deleted';

export const LINK_EVENT_KINDS: readonly LinkEventKind[] = ['link.created', 'link.edited', 'link.deleted'];

/** One change of one link. A disable, a moderation and an expiry are edits. */
export interface LinkChangeEvent {
  readonly kind: LinkEventKind;
  readonly linkId: string;
  readonly tenantId: string;
  readonly domain: string;
  readonly code: string;
  /**
   * The link's version after the change. A delete's is the deleted row's version + 1, the version of
   * the tombstone it leaves in the caches, so that no older value can come back.
   */
  readonly version: number;
}

/** An event as a shard's outbox holds it: `id` grows with each event written on that shard. */
export interface OutboxEvent extends LinkChangeEvent {
  readonly id: string;
  readonly shard: string;
  readonly occurredAt: Date;
}

export const createdEvent = (link: Link): LinkChangeEvent => eventOf('link.created', link, link.version);
export const editedEvent = (link: Link): LinkChangeEvent => eventOf('link.edited', link, link.version);
/** `deleted` is the row as it was before the delete. */
export const deletedEvent = (deleted: Pick<Link, 'id' | 'tenantId' | 'domain' | 'code' | 'version'>): LinkChangeEvent =>
  eventOf('link.deleted', deleted, deleted.version + 1);

function eventOf(kind: LinkEventKind, link: Pick<Link, 'id' | 'tenantId' | 'domain' | 'code'>, version: number): LinkChangeEvent {
  return { kind, linkId: link.id, tenantId: link.tenantId, domain: link.domain, code: link.code, version };
}

export const eventTarget = (event: LinkChangeEvent): ShortUrlIdentifier => ({ domain: event.domain, code: event.code });

/** Names one event of one link whether or not it has its outbox id yet (the relay matches what a request delivered to its row). */
export const eventKey = (e: LinkChangeEvent): string => `${e.kind}\u0000${e.linkId}\u0000${e.version}\u0000${e.domain}\u0000${e.code}`;

/**
 * Who relays the events a store writes, stamped on each event in its transaction: the writing
 * process's relay, until `leaseMs` later (then any relay takes it over). An owner of '' and a lease
 * of 0 leave events to whichever relay comes first (a process without a relay, a CLI).
 */
export interface OutboxStamp {
  readonly owner: string;
  readonly leaseMs: number;
}

export const UNCLAIMED: OutboxStamp = { owner: '', leaseMs: 0 };

/**
 * The outbox of one shard (docs/design.md, "Edits reach every instance"): the events of its link
 * changes, each leased to one relay at a time. A relay reads its own, takes over those whose lease
 * ran out (its owner crashed or stopped), lengthens its leases while it works on them, and deletes
 * each once every consumer has it.
 */
export interface LinkEventOutbox {
  readonly shardName: string;
  /** The owner's events with an id above `afterId` (null: all), oldest first, at most `limit`. */
  leased(owner: string, afterId: string | null, limit: number): Promise<OutboxEvent[]>;
  /**
   * Takes events whose lease ended by `now` (the oldest first, at most `limit`) for `owner` until
   * `until`, and returns them. Two relays never both get one.
   */
  claimExpired(owner: string, now: Date, until: Date, limit: number): Promise<OutboxEvent[]>;
  /**
   * The owner's events among `ids` (every event of the owner without `ids`: a relay that stops
   * gives them all up) are leased until `until`; how many it holds of them. A relay renews only
   * what it has read: its unread backlog keeps the lease it was written with, so that a renewal
   * does not grow with the backlog (docs/design.md, "Edits reach every instance").
   */
  renew(owner: string, until: Date, ids?: readonly string[]): Promise<number>;
  /** Deletes the owner's events among `ids` (every consumer has them). */
  settle(owner: string, ids: readonly string[]): Promise<void>;
  /** How many events wait, and when the oldest of them happened (null when none does). */
  backlog(): Promise<{ readonly events: number; readonly oldest: Date | null }>;
}

/** The outboxes of every shard this process can reach, and the stamp its stores put on new events. */
export interface LinkEventOutboxes {
  readonly stamp: OutboxStamp;
  /** Every shard's outbox, those of shards a move took out of the ring included (their events must still go out). */
  all(): readonly LinkEventOutbox[];
}

/** DI token: LinkEventOutboxes (the link shards' wiring binds it). */
export const LINK_EVENT_OUTBOXES = Symbol('LINK_EVENT_OUTBOXES');
