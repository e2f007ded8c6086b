import { parse } from 'csv-parse/sync';
import { DomainError, ErrorCode } from '@shortlink/core';
import { FeedFormat, ThreatEntry } from './threats';

/**
 * The threat feeds' published formats, read into entries (docs/design.md, "Trust and safety"). A
 * feed that is not what its format says fails as a whole (VALIDATION_FAILED), so that a broken
 * download never replaces the entries of the last good one; single lines a format does not know
 * are skipped (feeds grow columns).
 */
export function parseFeed(format: FeedFormat, text: string): ThreatEntry[] {
  switch (format) {
    case 'urlhaus':
      return parseUrlhaus(text);
    case 'phishtank':
      return parsePhishtank(text);
    case 'openphish':
      return parseOpenphish(text);
    case 'hosts':
      return parseHostList(text);
  }
}

const notA = (format: string, why: string) => new DomainError(ErrorCode.VALIDATION_FAILED, `not a ${format} feed: ${why}`, { format });

/**
 * abuse.ch URLhaus, `csv.txt` / `csv_recent`: `#` comment lines, the last of which names the
 * columns (`# id,dateadded,url,url_status,last_online,threat,tags,urlhaus_link,reporter`), then
 * quoted CSV rows. Every listed URL counts, online or not: an offline payload host comes back.
 */
export function parseUrlhaus(text: string): ThreatEntry[] {
  let columns = ['id', 'dateadded', 'url', 'url_status', 'last_online', 'threat', 'tags', 'urlhaus_link', 'reporter'];
  for (const line of text.split('\n', 64)) {
    const header = /^#\s*(id,.*url.*)$/i.exec(line.trim());
    if (header) columns = header[1].split(',').map((c) => c.trim().toLowerCase());
  }
  const urlAt = columns.indexOf('url');
  const threatAt = columns.indexOf('threat');
  if (urlAt < 0) throw notA('URLhaus', 'no url column');
  let rows: string[][];
  try {
    rows = parse(text, { comment: '#', comment_no_infix: true, relax_column_count: true, skip_empty_lines: true, relax_quotes: true }) as string[][];
  } catch (error) {
    throw notA('URLhaus', (error as Error).message);
  }
  const entries: ThreatEntry[] = [];
  for (const row of rows) {
    const url = row[urlAt];
    if (!url || !/^https?:\/\//i.test(url)) continue;
    const threat = (threatAt >= 0 && row[threatAt]) || 'malware';
    entries.push({ kind: 'url', url, threat: `URLhaus ${threat}` });
  }
  if (rows.length > 0 && entries.length === 0) throw notA('URLhaus', 'no row has a URL in its url column');
  return entries;
}

/**
 * PhishTank, `online-valid.json`: an array of `{phish_id, url, phish_detail_url, submission_time,
 * verified, verification_time, online, details, target}`. Only verified entries count.
 */
export function parsePhishtank(text: string): ThreatEntry[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw notA('PhishTank', (error as Error).message);
  }
  if (!Array.isArray(data)) throw notA('PhishTank', 'the document is not an array');
  const entries: ThreatEntry[] = [];
  for (const item of data as Array<Record<string, unknown>>) {
    if (typeof item !== 'object' || item === null || typeof item.url !== 'string') continue;
    if (item.verified !== undefined && item.verified !== 'yes' && item.verified !== true) continue;
    const target = typeof item.target === 'string' && item.target && item.target !== 'Other' ? ` of ${item.target}` : '';
    entries.push({ kind: 'url', url: item.url, threat: `PhishTank phishing${target}` });
  }
  return entries;
}

/** OpenPhish, `feed.txt`: one URL per line. */
export function parseOpenphish(text: string): ThreatEntry[] {
  const entries: ThreatEntry[] = [];
  let lines = 0;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    lines++;
    if (/^https?:\/\//i.test(line)) entries.push({ kind: 'url', url: line, threat: 'OpenPhish phishing' });
  }
  if (lines > 0 && entries.length === 0) throw notA('OpenPhish', 'no line is an http(s) URL');
  return entries;
}

/**
 * Host lists as DNS blockers use them: a hosts file (`0.0.0.0 evil.example`, several names per
 * line allowed), plain names one per line, or Adblock-style `||evil.example^`. `#` and `!` start
 * comments. A listed name covers its subdomains.
 */
export function parseHostList(text: string): ThreatEntry[] {
  const entries: ThreatEntry[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, '').trim();
    if (!line || line.startsWith('!') || line.startsWith('[')) continue;
    const adblock = /^\|\|([^/^$]+)\^?(\$.*)?$/.exec(line);
    const names = adblock ? [adblock[1]] : line.split(/\s+/);
    // A hosts file line starts with the address the names are sent to.
    const hosts = /^(\d+\.\d+\.\d+\.\d+|[0-9a-f:]+:[0-9a-f:]*)$/i.test(names[0]) ? names.slice(1) : names;
    for (const host of hosts) {
      if (!host || LOCAL_NAMES.has(host.toLowerCase())) continue;
      entries.push({ kind: 'host', host, threat: 'listed host' });
    }
  }
  return entries;
}

/** Names hosts files carry for the machine itself. */
const LOCAL_NAMES = new Set(['localhost', 'localhost.localdomain', 'local', 'broadcasthost', 'ip6-localhost', 'ip6-loopback', '0.0.0.0']);
