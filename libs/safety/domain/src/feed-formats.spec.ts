import { parseFeed } from './feed-formats';
import { HOSTS_SAMPLE, OPENPHISH_SAMPLE, PHISHTANK_SAMPLE, URLHAUS_SAMPLE } from './testing/feed-samples';
import { ThreatIndex } from './threats';

describe('threat feeds in their published formats', () => {
  it('reads URLhaus CSV: the header comment names the columns, quoted tags with commas stay one field, IP-literal URLs never match a target', () => {
    const entries = parseFeed('urlhaus', URLHAUS_SAMPLE);
    expect(entries).toEqual([
      { kind: 'url', url: 'http://117.206.201.4:40359/Mozi.m', threat: 'URLhaus malware_download' },
      { kind: 'url', url: 'https://files.evil-cdn.example/invoice.exe', threat: 'URLhaus malware_download' },
      { kind: 'url', url: 'http://dropper.example/', threat: 'URLhaus malware_download' },
    ]);
    const index = new ThreatIndex({ format: 'urlhaus', location: 'x', action: 'banned' }, entries);
    expect(index.size).toBe(2);
    // The scheme does not count; the path does; a whole-host entry covers the host's every path (not its subdomains).
    expect(index.threatOf('http://files.evil-cdn.example/invoice.exe', 'files.evil-cdn.example')).toBe('URLhaus malware_download');
    expect(index.threatOf('https://files.evil-cdn.example/other.exe', 'files.evil-cdn.example')).toBeNull();
    expect(index.threatOf('https://dropper.example/a/b?c=1', 'dropper.example')).toBe('URLhaus malware_download');
    expect(index.threatOf('https://www.dropper.example/', 'www.dropper.example')).toBeNull();
  });

  it('reads PhishTank JSON, verified entries only, naming the brand they impersonate', () => {
    const entries = parseFeed('phishtank', PHISHTANK_SAMPLE);
    expect(entries).toEqual([{ kind: 'url', url: 'https://secure-login.bank-verify.example/account/update.php?id=1', threat: 'PhishTank phishing of PayPal' }]);
    const index = new ThreatIndex({ format: 'phishtank', location: 'x', action: 'banned' }, entries);
    expect(index.threatOf('https://secure-login.bank-verify.example/account/update.php?id=1#top', 'secure-login.bank-verify.example')).toBe(
      'PhishTank phishing of PayPal',
    );
    expect(index.threatOf('https://secure-login.bank-verify.example/account/update.php?id=2', 'secure-login.bank-verify.example')).toBeNull();
  });

  it('reads OpenPhish text, one URL a line', () => {
    expect(parseFeed('openphish', OPENPHISH_SAMPLE).map((e) => (e.kind === 'url' ? e.url : e.host))).toEqual([
      'https://steam-gift.example/claim',
      'http://wallet-connect.example/seed?x=1',
      'https://login.office365.example.net/',
    ]);
  });

  it('reads host lists as DNS blockers write them (hosts files, plain names, Adblock rules); a listed name covers its subdomains', () => {
    const entries = parseFeed('hosts', HOSTS_SAMPLE);
    expect(entries.map((e) => (e.kind === 'host' ? e.host : e.url))).toEqual([
      'tracker.ads.example',
      'banner.ads.example',
      'pixel.ads.example',
      'malvertising.example',
      'popunder.example',
    ]);
    const index = new ThreatIndex({ format: 'hosts', location: 'x', action: 'flagged' }, entries);
    expect(index.threatOf('https://cdn.malvertising.example/x', 'cdn.malvertising.example')).toBe('listed host');
    expect(index.threatOf('https://malvertising.example/', 'malvertising.example')).toBe('listed host');
    expect(index.threatOf('https://notmalvertising.example/', 'notmalvertising.example')).toBeNull();
    expect(index.threatOf('https://ads.example/', 'ads.example')).toBeNull();
  });

  it('refuses a document that is not what its format says, so a broken download never replaces a good feed', () => {
    expect(() => parseFeed('phishtank', '<html>503 Service Unavailable</html>')).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(() => parseFeed('phishtank', '{"error":"rate limited"}')).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(() => parseFeed('openphish', '<html><body>not found</body></html>')).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(() => parseFeed('urlhaus', '"1","2026-12-07","not a url","online"\n')).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
  });

  it('tells what a new load adds, and gives the same digest to the same threats in any order', () => {
    const spec = { format: 'hosts' as const, location: 'x', action: 'flagged' as const };
    const before = new ThreatIndex(spec, parseFeed('hosts', 'a.example\nb.example\n'));
    const after = new ThreatIndex(spec, parseFeed('hosts', 'b.example\na.example\nc.example\n'));
    expect(after.hostsAddedSince(before)).toEqual({ covering: ['c.example'], exact: [] });
    expect(after.hostsAddedSince(null)).toEqual({ covering: ['b.example', 'a.example', 'c.example'], exact: [] });
    expect(new ThreatIndex(spec, parseFeed('hosts', 'b.example\na.example\n')).digest).toBe(before.digest);
    expect(after.digest).not.toBe(before.digest);
    // The same entries with another action are another verdict: a new digest, and every host again.
    const banned = new ThreatIndex({ ...spec, action: 'banned' }, parseFeed('hosts', 'a.example\nb.example\n'));
    expect(banned.digest).not.toBe(before.digest);
    expect(banned.hostsAddedSince(before).covering).toEqual(['a.example', 'b.example']);
    const urls = new ThreatIndex(
      { format: 'openphish', location: 'x', action: 'banned' },
      parseFeed('openphish', 'https://a.example/x\nhttps://d.example/y\n'),
    );
    expect(urls.hostsListed()).toEqual({ covering: [], exact: ['a.example', 'd.example'] });
  });
});
