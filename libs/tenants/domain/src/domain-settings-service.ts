import { AuditContext, auditEntry, diffOf, OPERATOR_LOG } from '@shortlink/audit-domain';
import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import { Principal } from './credentials';
import { DomainStatus } from './domain-ownership';
import {
  applySettingsEdit,
  defaultSettingsOf,
  DOMAIN_SETTING_FIELDS,
  DomainSettings,
  DomainSettingsEdit,
  DomainSettingsStore,
  DomainSettingsValues,
  SettingsUrlCheck,
} from './domain-settings';
import { TenantStore } from './ports';
import { checkDomain } from './tenant-service';

/** Tells every redirect instance that a domain's settings changed (docs/design.md, "Edits reach every instance"). */
export interface DomainSettingsChanges {
  settingsChanged(domain: string, version: number): Promise<void>;
}

export interface DomainSettingsServiceOptions {
  /** The service's own domains (SHORTLINK_DEFAULT_DOMAIN, SHORTLINK_DOMAINS): operators' (the admin scope). */
  readonly serviceDomains: readonly string[];
  readonly checkUrl: SettingsUrlCheck;
  readonly changes: DomainSettingsChanges;
  readonly clock?: Clock;
}

/** A domain's settings as its owner reads them, whether it is one of the service's shared domains, and whether it serves. */
export interface OwnedDomainSettings extends DomainSettings {
  readonly shared: boolean;
  /** A shared domain is always verified; a tenant's serves once verified (docs/design.md, "Custom domains and TLS"). */
  readonly status: DomainStatus;
}

/**
 * The settings of domains, read and changed by who owns them (docs/design.md, "Domain settings"):
 * a tenant its own domains, an operator (a key with the admin scope) the service's shared ones. A
 * domain the caller does not own is 404 `DOMAIN_NOT_FOUND`, whoever owns it: another tenant's
 * domains cannot be probed. A change is saved, then told to every redirect instance.
 */
export class DomainSettingsService {
  private readonly serviceDomains: ReadonlySet<string>;
  private readonly clock: Clock;

  constructor(
    private readonly store: DomainSettingsStore,
    private readonly tenants: TenantStore,
    private readonly options: DomainSettingsServiceOptions,
  ) {
    this.serviceDomains = new Set(options.serviceDomains.map((d) => d.toLowerCase()));
    this.clock = options.clock ?? systemClock;
  }

  /** The caller's own domains, and for an operator the service's, each with its settings. */
  async list(principal: Principal): Promise<OwnedDomainSettings[]> {
    const statuses = new Map((await this.tenants.allDomains()).filter((d) => d.tenantId === principal.tenantId).map((d) => [d.domain, d.status]));
    const own = [...statuses.keys()];
    const shared = isOperator(principal) ? [...this.serviceDomains] : [];
    const stored = new Map((await this.store.findMany([...shared, ...own])).map((s) => [s.domain, s]));
    const view = (domain: string, isShared: boolean) => ({
      ...(stored.get(domain) ?? defaultSettingsOf(domain)),
      shared: isShared,
      status: statuses.get(domain) ?? 'verified',
    });
    return [...shared.sort().map((d) => view(d, true)), ...own.sort().map((d) => view(d, false))];
  }

  async get(principal: Principal, raw: unknown): Promise<OwnedDomainSettings> {
    const { domain, shared, status } = await this.owned(principal, raw);
    return { ...((await this.store.find(domain)) ?? defaultSettingsOf(domain)), shared, status };
  }

  /**
   * Applies `edit` (absent fields kept, null ones reset; every URL through the URL policy), with
   * `ifMatch` the version the caller read (412 when it changed). Answers once the meta database holds
   * the change and the redirect instances were told; when they could not be told, the change is saved
   * and the answer is 503: the instances read it within REDIRECT_TENANT_REFRESH_MS anyway. With
   * `audit`, the change's diff is written with it, in its transaction: `domain.settings_changed` in the
   * tenant's log, `shared_domain.settings_changed` in the operators' (docs/design.md, "Audit log").
   */
  async update(principal: Principal, raw: unknown, edit: DomainSettingsEdit, ifMatch: number | null, audit?: AuditContext): Promise<OwnedDomainSettings> {
    const { domain, shared, status } = await this.owned(principal, raw);
    // A shared domain's links are every tenant's: each tenant turns tracking on for its own links or domains.
    if (shared && edit.trackConversions === true)
      throw new DomainError(ErrorCode.VALIDATION_FAILED, 'trackConversions is set on a link or on a tenant’s own domain, not on a shared domain', {
        field: 'trackConversions',
      });
    for (let attempt = 0; ; attempt++) {
      const current = (await this.store.find(domain)) ?? defaultSettingsOf(domain);
      if (ifMatch !== null && current.version !== ifMatch) throw stale(current.version);
      const values: DomainSettingsValues = await applySettingsEdit(current, edit, this.options.checkUrl);
      const next: DomainSettings = { ...values, domain, version: current.version + 1, updatedAt: new Date(this.clock.now()) };
      const changes = audit && diffOf<DomainSettingsValues>(current, values, DOMAIN_SETTING_FIELDS);
      const entry =
        audit && changes
          ? auditEntry(
              audit,
              {
                log: shared ? OPERATOR_LOG : principal.tenantId,
                action: shared ? 'shared_domain.settings_changed' : 'domain.settings_changed',
                target: { type: 'domain', id: domain, domain },
                changes,
              },
              next.updatedAt!,
            )
          : undefined;
      if (await this.store.save(next, current.version, entry)) {
        try {
          await this.options.changes.settingsChanged(domain, next.version);
        } catch (error) {
          const why = 'the settings are saved, but the redirect instances could not be told; they read them again within a second';
          throw new DomainError(ErrorCode.DEPENDENCY_UNAVAILABLE, why, { retryAfterSeconds: 1 }, { cause: error });
        }
        return { ...next, shared, status };
      }
      if (ifMatch !== null || attempt >= 4) throw stale(((await this.store.find(domain)) ?? current).version);
    }
  }

  /** The domain as stored, if the caller may see it: a service domain for an operator, else one of its tenant's own. */
  private async owned(principal: Principal, raw: unknown): Promise<{ domain: string; shared: boolean; status: DomainStatus }> {
    const text = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
    if (this.serviceDomains.has(text)) {
      if (!isOperator(principal))
        throw new DomainError(ErrorCode.INSUFFICIENT_SCOPE, `${text} is one of the service's domains: its settings need the admin scope`, { scope: 'admin' });
      return { domain: text, shared: true, status: 'verified' };
    }
    const domain = checkDomain(raw);
    const found = (await this.tenants.allDomains()).find((d) => d.domain === domain);
    if (found?.tenantId !== principal.tenantId) throw new DomainError(ErrorCode.DOMAIN_NOT_FOUND, `you have no domain ${domain}`, { domain });
    return { domain, shared: false, status: found.status };
  }
}

const isOperator = (principal: Principal) => principal.scopes.includes('admin');

const stale = (version: number) =>
  new DomainError(ErrorCode.PRECONDITION_FAILED, `the settings changed since you read them (now version ${version}); read them again and retry`, {
    currentVersion: version,
  });
