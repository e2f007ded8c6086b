import { DomainError, ErrorCode } from '@shortlink/core';
import { PeriodicRead, PeriodicReadOptions } from '@shortlink/tenants-domain';
import { BrokenLinkMode, BrokenLinkSettings, SafetySettingsStore } from './ports';

/** Where visitors of a broken link go when the tenant set nothing: to the target all the same. */
export const DEFAULT_BROKEN_LINK_SETTINGS: BrokenLinkSettings = { mode: 'target', url: null, version: 0, updatedAt: null };

const MODES: readonly BrokenLinkMode[] = ['target', 'page', 'url'];

/** A tenant's settings for visitors of its broken links, as the API sends them. */
export interface BrokenLinkSettingsInput {
  readonly mode: unknown;
  readonly url?: unknown;
}

/**
 * A tenant's choice for visitors of a link the checks found broken (docs/design.md, "Trust and
 * safety"): the target all the same, a page that says so (with a way on), or a URL of its own,
 * which passes the URL policy of links. Versioned: `ifMatch` (the ETag) guards concurrent changes.
 */
export class BrokenLinkSettingsService {
  constructor(
    private readonly store: SafetySettingsStore,
    /** The URL policy of link targets: the normalised URL, or its 400. */
    private readonly checkUrl: (raw: unknown, field: string) => Promise<string>,
    private readonly now: () => number = Date.now,
  ) {}

  async get(tenantId: string): Promise<BrokenLinkSettings> {
    return (await this.store.brokenLinkSettings(tenantId)) ?? DEFAULT_BROKEN_LINK_SETTINGS;
  }

  async update(tenantId: string, input: BrokenLinkSettingsInput, ifMatch: number | null): Promise<BrokenLinkSettings> {
    if (typeof input.mode !== 'string' || !(MODES as readonly string[]).includes(input.mode))
      throw new DomainError(ErrorCode.VALIDATION_FAILED, `mode must be one of ${MODES.join(', ')}`, { field: 'mode' });
    const mode = input.mode as BrokenLinkMode;
    if (mode !== 'url' && input.url !== undefined && input.url !== null)
      throw new DomainError(ErrorCode.VALIDATION_FAILED, 'url is given only with mode "url"', { field: 'url' });
    if (mode === 'url' && (input.url === undefined || input.url === null))
      throw new DomainError(ErrorCode.VALIDATION_FAILED, 'mode "url" needs the url visitors are sent to', { field: 'url' });
    const url = mode === 'url' ? await this.checkUrl(input.url, 'url') : null;
    const current = await this.get(tenantId);
    if (ifMatch !== null && ifMatch !== current.version)
      throw new DomainError(ErrorCode.PRECONDITION_FAILED, `the settings changed since you read them (now version ${current.version})`, {
        currentVersion: current.version,
      });
    const next: BrokenLinkSettings = { mode, url, version: current.version + 1, updatedAt: new Date(this.now()) };
    if (!(await this.store.saveBrokenLinkSettings(tenantId, next, current.version))) {
      const now = await this.get(tenantId);
      throw new DomainError(ErrorCode.PRECONDITION_FAILED, `the settings changed meanwhile (now version ${now.version}); read them again`, {
        currentVersion: now.version,
      });
    }
    return next;
  }
}

/**
 * Every tenant's choice for visitors of broken links, held in memory by the redirect and read again
 * every REDIRECT_TENANT_REFRESH_MS (docs/design.md, "Trust and safety"). Asked only for a visit of a
 * broken target: a healthy link's redirect never looks here. The last tables stay in use while the
 * meta database is down.
 */
export class BrokenLinkDirectory {
  private settings = new Map<string, BrokenLinkSettings>();
  private readonly periodic: PeriodicRead;

  constructor(
    private readonly store: SafetySettingsStore,
    options: PeriodicReadOptions,
  ) {
    this.periodic = new PeriodicRead(() => this.read(), options);
  }

  start(): Promise<void> {
    return this.periodic.start();
  }

  stop(): void {
    this.periodic.stop();
  }

  refresh(): Promise<void> {
    return this.periodic.run();
  }

  /** What visitors of the tenant's broken links meet; the default (the target) when it set nothing. */
  fallbackFor(tenantId: string): BrokenLinkSettings {
    return this.settings.get(tenantId) ?? DEFAULT_BROKEN_LINK_SETTINGS;
  }

  private async read(): Promise<void> {
    const all = await this.store.allBrokenLinkSettings();
    this.settings = new Map(all.map((s) => [s.tenantId, s.settings]));
  }
}
