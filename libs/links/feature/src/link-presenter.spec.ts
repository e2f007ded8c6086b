import type { AppConfig } from '@shortlink/config';
import { Link, NO_OPTIONS } from '@shortlink/links-domain';
import { LinkPresenter } from './link-presenter';

describe('LinkPresenter.viewJson', () => {
  const presenter = new LinkPresenter({ links: { defaultDomain: 'sho.rt', publicBaseUrl: 'https://sho.rt' } } as unknown as AppConfig);
  const at = new Date(Date.UTC(2026, 11, 3, 12, 0, 0, 7));
  const bare: Link = {
    ...NO_OPTIONS,
    id: '42',
    domain: 'sho.rt',
    code: 'aB3',
    targetUrl: 'https://example.com/a?b=c&d="e"',
    tenantId: 't1',
    createdAt: at,
    updatedAt: at,
    expiresAt: null,
    status: 'active',
    redirectType: 302,
    version: 1,
    moderation: 'clear',
    moderationReason: null,
  };
  const full: Link = {
    ...bare,
    domain: 'own.example',
    title: 'Quotes " and \\ and \u2028 and ünïcode 😀',
    tags: ['a', 'b"c'],
    maxClicks: 10,
    passwordHash: 'hash',
    utm: { source: 'mail', campaign: 'x' },
    forwardQuery: false,
    redirectRules: [
      { url: 'https://example.de/', conditions: [{ type: 'country', value: 'DE' }] },
      { url: 'https://apps.example/', conditions: [{ type: 'device', value: 'ios' }] },
      {
        url: 'https://es.example/"q"',
        conditions: [
          { type: 'language', value: 'es' },
          { type: 'query-param', name: 'a"b' },
        ],
      },
    ],
    appTargets: { ios: 'myapp://product/42?a="b"', android: 'https://app.example/p/42' },
    variants: [{ url: 'https://v.example/', weight: 3 }],
    clicksPerIpPerMinute: 5,
    expiresAt: new Date(Date.UTC(2027, 0, 1)),
    updatedAt: new Date(at.getTime() + 1000),
    status: 'disabled',
    redirectType: 301,
    version: 7,
    moderation: 'flagged',
    moderationReason: 'homograph: pаypal',
  };

  it('is the text of JSON.stringify(view), with and without options', () => {
    for (const link of [bare, full, { ...bare, updatedAt: new Date(at.getTime()) }]) {
      expect(presenter.viewJson(link)).toBe(JSON.stringify(presenter.view(link)));
      expect(JSON.parse(presenter.viewJson(link))).toEqual(presenter.view(link));
    }
  });
});
