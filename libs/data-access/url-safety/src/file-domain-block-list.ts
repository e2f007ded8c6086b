import { readFileSync } from 'fs';
import { coveredBy, DomainBlockList } from '@shortlink/url-policy';

/**
 * Blocked domains from a file (one per line, `#` comments), plus the ones operators add at run
 * time. A listed domain covers its subdomains. Names are compared in punycode, lower case.
 */
export class FileDomainBlockList implements DomainBlockList {
  private readonly fromFile: Set<string>;
  private readonly added = new Set<string>();

  constructor(file: string | null) {
    this.fromFile = new Set(file ? parseBlockList(readFileSync(file, 'utf8')) : []);
  }

  blocking(host: string): string | null {
    return coveredBy(host, this.fromFile) ?? coveredBy(host, this.added);
  }

  /** Operators' additions (the admin API), kept beside the file's. */
  replaceAdded(domains: Iterable<string>): void {
    this.added.clear();
    for (const d of domains) this.added.add(normaliseDomain(d));
  }

  get size(): number {
    return this.fromFile.size + this.added.size;
  }
}

export function normaliseDomain(domain: string): string {
  return new URL(`http://${domain.trim()}`).hostname.toLowerCase().replace(/\.$/, '');
}

export function parseBlockList(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter(Boolean)
    .map(normaliseDomain);
}
