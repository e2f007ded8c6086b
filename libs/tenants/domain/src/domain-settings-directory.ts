import { DomainSettings, DomainSettingsStore } from './domain-settings';
import { PeriodicRead, PeriodicReadOptions } from './periodic-read';

/** `refreshMs`: how often the stored versions are compared with those held, the bound when a change message was lost. */
export type DomainSettingsDirectoryOptions = PeriodicReadOptions;

/**
 * Every domain's settings in memory, for the redirect (docs/design.md, "Domain settings"): a page or
 * a domain redirect reads a Map, never the meta database. A change message (`reload`) reads that
 * one domain again at once; every `refreshMs` the stored versions are compared with those held, and
 * what differs is read again (a lost message, a domain removed with its settings). While the meta
 * database is down the settings held stay in use.
 */
export class DomainSettingsDirectory {
  private readonly held = new Map<string, { readonly settings: DomainSettings; readonly readAt: number }>();
  /** Orders the reads: a refresh removes only what was read before it began. */
  private reads = 0;
  private readonly periodic: PeriodicRead;

  constructor(
    private readonly store: DomainSettingsStore,
    options: DomainSettingsDirectoryOptions,
  ) {
    this.periodic = new PeriodicRead(() => this.compareAll(), options);
  }

  start(): Promise<void> {
    return this.periodic.start();
  }

  stop(): void {
    this.periodic.stop();
  }

  /** The settings of `domain` (lower case, as the redirect names it), or undefined for the defaults. */
  get(domain: string): DomainSettings | undefined {
    return this.held.size === 0 ? undefined : this.held.get(domain)?.settings;
  }

  /** A change message: `domain` is read again now (a version not above the one held changes nothing). */
  async reload(domain: string, version = Number.MAX_SAFE_INTEGER): Promise<void> {
    if ((this.held.get(domain)?.settings.version ?? 0) >= version) return;
    const readAt = ++this.reads;
    try {
      const settings = await this.store.find(domain);
      this.keep(domain, settings, readAt);
    } catch (error) {
      this.periodic.failed(error); // the periodic refresh reads it again
    }
  }

  /** Compares every stored version with the one held and reads what differs; concurrent calls share one read. */
  refresh(): Promise<void> {
    return this.periodic.run();
  }

  private async compareAll(): Promise<void> {
    const readAt = ++this.reads;
    const versions = await this.store.versions();
    const stored = new Set(versions.map((v) => v.domain));
    const changed = versions.filter((v) => this.held.get(v.domain)?.settings.version !== v.version).map((v) => v.domain);
    const read = changed.length ? await this.store.findMany(changed) : [];
    for (const settings of read) this.keep(settings.domain, settings, readAt);
    for (const [domain, entry] of this.held) if (!stored.has(domain) && entry.readAt < readAt) this.held.delete(domain);
  }

  /** Holds what a read found, unless something newer is held; nothing found: the domain has its defaults again. */
  private keep(domain: string, settings: DomainSettings | null, readAt: number): void {
    const held = this.held.get(domain);
    if (settings === null) {
      if (held && held.readAt < readAt) this.held.delete(domain);
    } else if (!held || held.settings.version < settings.version) {
      this.held.set(domain, { settings, readAt });
    }
  }
}
