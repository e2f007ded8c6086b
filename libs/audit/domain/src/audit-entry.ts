import { randomUUID } from 'crypto';

/**
 * Who made a change (docs/design.md, "Audit log"): an API key, a person signed in with a session,
 * an operator (a call to the admin API), or the platform itself. `name` is what a reader
 * recognises: the key's name, the person's email.
 */
export type AuditActorType = 'key' | 'person' | 'operator' | 'system';

export interface AuditActor {
  readonly type: AuditActorType;
  readonly id: string;
  readonly name: string;
  /**
   * For a key: the person it acts for (its maker, or whom an owner transferred it to), by member id
   * and email, so that the log names the person behind every key. Null (or absent) otherwise.
   */
  readonly onBehalfOf?: { readonly id: string; readonly name: string } | null;
}

/** The platform's own changes (jobs, boot-time provisioning). */
export const SYSTEM_ACTOR: AuditActor = { type: 'system', id: 'system', name: 'system' };

/** What a request knows of itself for the log: who, and from which client address (TRUSTED_PROXIES honoured). */
export interface AuditContext {
  readonly actor: AuditActor;
  readonly clientAddress: string | null;
}

/**
 * The log an entry belongs to: a tenant's (its id), read by the tenant's owners and admins, or the
 * operators' own (tenants, plans, moderation, shared domains), read with the `admin` scope.
 */
export const OPERATOR_LOG = 'operator';

/**
 * Stable names of what happened, `<thing>.<what>`: readers filter on them (`action=link.created`,
 * or a family, `action=link`), so a name once shipped is never changed. Some are reserved for
 * changes other parts of the platform record (members, sessions, domain settings).
 */
export const AUDIT_ACTIONS = [
  // links (the tenant's log; written right after the shard acknowledged the change)
  'link.created',
  'link.edited',
  'link.disabled',
  'link.enabled',
  'link.deleted',
  'link.batch_created',
  'link.bulk_edited',
  'link.bulk_disabled',
  'link.bulk_enabled',
  'link.bulk_deleted',
  // a visitor's report of a link (the tenant's log; relayed by the generation app: docs/design.md, "Trust and safety")
  'link.reported',
  // a link's visits, or the orphan visits of the caller's domains, deleted from the analytics store (the tenant's log, after the deletion)
  'link.visits_deleted',
  'orphan_visits.deleted',
  // keys (the tenant's log; same transaction)
  'key.created',
  'key.revoked',
  'key.transferred',
  // members, sessions and single sign-on (the tenant's log; reserved for the members' store)
  'member.invited',
  'member.joined',
  'member.role_changed',
  'member.removed',
  'member.password_changed',
  'member.second_factor_changed',
  'member.sessions_revoked',
  'sso.settings_changed',
  'auth.signed_in',
  'auth.sign_in_failed',
  'auth.signed_out',
  // webhooks (the tenant's log; right after the meta database took the change; `disabled` by the deliverer)
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'webhook.disabled',
  // a tenant's domain settings (the tenant's log; reserved)
  'domain.settings_changed',
  // conversions (the tenant's log; right after the meta database took the change): the attribution
  // model, and the Stripe receiver's signing secret set, replaced or removed (never the secret itself)
  'conversions.settings_changed',
  'stripe.configured',
  'stripe.removed',
  // a tenant's own domains (the tenant's log; same transaction): added and removed by the tenant,
  // verified and unverified by the ownership checks (docs/design.md, "Custom domains and TLS")
  'domain.added',
  'domain.removed',
  'domain.verified',
  'domain.unverified',
  // operators (the operator log; same transaction, moderation right after the shard)
  'tenant.created',
  'tenant.plan_changed',
  'tenant.renamed',
  'tenant.suspended',
  'tenant.reactivated',
  'tenant.updated',
  'tenant.domain_added',
  'tenant.domain_removed',
  'link.moderated',
  'shared_domain.settings_changed',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** What a change was made to: a link (code and domain), a key, a member, a tenant, a domain, or several links. */
export interface AuditTarget {
  readonly type: 'link' | 'links' | 'key' | 'member' | 'session' | 'tenant' | 'domain' | 'webhook';
  /** The link's code, the key's, member's or tenant's id, the domain; null for several links. */
  readonly id: string | null;
  readonly domain: string | null;
}

export type AuditValue = string | number | boolean | null | readonly AuditValue[] | { readonly [key: string]: AuditValue };

/** A short diff, field → before and after (`from` absent where each target had its own, as in a bulk edit). */
export type AuditChanges = Readonly<Record<string, { readonly from?: AuditValue; readonly to: AuditValue }>>;

/** Facts beside the diff: counts, names, `passwordChanged: true` (never a secret itself). */
export type AuditDetails = Readonly<Record<string, AuditValue>>;

export interface AuditEntry {
  /** Public id of the entry (a UUID); appending an entry twice stores it once. */
  readonly id: string;
  /** A tenant id, or OPERATOR_LOG. */
  readonly log: string;
  readonly at: Date;
  readonly actor: AuditActor;
  readonly action: AuditAction;
  readonly target: AuditTarget;
  readonly clientAddress: string | null;
  readonly changes: AuditChanges | null;
  readonly details: AuditDetails | null;
}

/** An entry as the store gives it back, with its place in the log's order (`seq` grows with each append). */
export interface StoredAuditEntry extends AuditEntry {
  readonly seq: string;
}

/** What a caller says of a change; `auditEntry` adds the id, the time, the actor and the address. */
export interface AuditFacts {
  readonly log: string;
  readonly action: AuditAction;
  readonly target: AuditTarget;
  readonly changes?: AuditChanges | null;
  readonly details?: AuditDetails | null;
}

/**
 * Field names that hold secrets: an entry naming one is a programming error, refused before it is
 * stored (docs/design.md, "Audit log": record `passwordChanged: true`, never the password, its hash,
 * a key or a token).
 */
const SECRET_FIELD = /^(password|passwordHash|password_hash|apiKey|api_key|keyHash|key_hash|secret|clientSecret|token|csrfToken|sessionToken|recoveryCodes?)$/i;

/** Longest JSON text of one value in an entry; a longer value is cut (the log keeps a short diff, not copies). */
export const MAX_VALUE_CHARS = 500;

export function auditEntry(context: AuditContext, facts: AuditFacts, at: Date): AuditEntry {
  const changes = facts.changes && Object.keys(facts.changes).length ? facts.changes : null;
  const details = facts.details && Object.keys(facts.details).length ? facts.details : null;
  for (const field of [...Object.keys(changes ?? {}), ...Object.keys(details ?? {})]) {
    if (SECRET_FIELD.test(field))
      throw new Error(`audit entry ${facts.action} names the secret field "${field}"; record a fact such as passwordChanged instead`);
  }
  return {
    id: randomUUID(),
    log: facts.log,
    at,
    actor: context.actor,
    action: facts.action,
    target: facts.target,
    clientAddress: context.clientAddress,
    changes: changes && shortenChanges(changes),
    details: details && (Object.fromEntries(Object.entries(details).map(([k, v]) => [k, shorten(v)])) as AuditDetails),
  };
}

/**
 * The fields among `fields` whose values differ between `before` and `after` (compared as JSON), as
 * {from, to}; null when none does. Dates are written as ISO text.
 */
export function diffOf<T extends object>(before: T, after: T, fields: ReadonlyArray<keyof T & string>): AuditChanges | null {
  const changes: Record<string, { from: AuditValue; to: AuditValue }> = {};
  for (const field of fields) {
    const from = plain(before[field]);
    const to = plain(after[field]);
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[field] = { from, to };
  }
  return Object.keys(changes).length ? changes : null;
}

/** A value as the log holds it: dates as ISO text, undefined as null, the rest as JSON has it. */
export function plain(value: unknown): AuditValue {
  if (value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  return JSON.parse(JSON.stringify(value)) as AuditValue;
}

function shortenChanges(changes: AuditChanges): AuditChanges {
  return Object.fromEntries(
    Object.entries(changes).map(([field, change]) => [
      field,
      'from' in change ? { from: shorten(change.from!), to: shorten(change.to) } : { to: shorten(change.to) },
    ]),
  );
}

/** A value whose JSON is longer than MAX_VALUE_CHARS becomes that JSON cut short, ending in `…`. */
function shorten(value: AuditValue): AuditValue {
  if (typeof value === 'string') return value.length > MAX_VALUE_CHARS ? `${value.slice(0, MAX_VALUE_CHARS - 1)}…` : value;
  if (value === null || typeof value !== 'object') return value;
  const json = JSON.stringify(value);
  return json.length > MAX_VALUE_CHARS ? `${json.slice(0, MAX_VALUE_CHARS - 1)}…` : value;
}
