import { linkFromRow, LinkRow, optionsJson } from './rows';

const row = (options: object | null): LinkRow => ({
  id: '42',
  domain: 'sho.rt',
  code: 'abc1234',
  target_url: 'https://example.com/',
  tenant_id: 't1',
  created_at: 1_700_000_000_000,
  updated_at: null,
  expires_at: null,
  status: 1,
  redirect_type: 302,
  version: 3,
  moderation: 0,
  title: null,
  options: options === null ? null : JSON.stringify(options),
  crawlable: 0,
  health: null,
  health_detail: null,
});

describe('link rows', () => {
  it('reads the country and device targets of a row written before redirect rules as rules, countries first', () => {
    const link = linkFromRow(
      row({
        geoTargets: { DE: 'https://example.de/', FR: 'https://example.fr/' },
        deviceTargets: { desktop: 'https://d.example/', ios: 'https://i.example/' },
      }),
    );
    expect(link.redirectRules).toEqual([
      { url: 'https://example.de/', conditions: [{ type: 'country', value: 'DE' }] },
      { url: 'https://example.fr/', conditions: [{ type: 'country', value: 'FR' }] },
      { url: 'https://i.example/', conditions: [{ type: 'device', value: 'ios' }] },
      { url: 'https://d.example/', conditions: [{ type: 'device', value: 'desktop' }] },
    ]);
    // The next write stores them as rules, and the old fields are gone.
    const stored = JSON.parse(optionsJson(link)!);
    expect(stored.redirectRules).toEqual(link.redirectRules);
    expect(stored).not.toHaveProperty('geoTargets');
    expect(linkFromRow(row(stored)).redirectRules).toEqual(link.redirectRules);
  });

  it('reads a link without options as one without rules, and stores none', () => {
    const link = linkFromRow(row(null));
    expect(link.redirectRules).toBeNull();
    expect(optionsJson(link)).toBeNull();
  });
});
