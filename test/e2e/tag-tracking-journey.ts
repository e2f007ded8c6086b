import { Endpoints } from '@shortlink/harness';
import { propagated, redirectOf } from './support';
import { api } from './tenant-journey';

/**
 * Conversion tracking on a tag over HTTP, on either profile (docs/analytics.md, "Conversions"): a
 * tenant switches `trackConversions` on for a tag with `PATCH /api/v1/tags/{tag}`; within the edit
 * bound every redirect of a link carrying it (tagged before, tagged later, created with it) adds a
 * click id a lead is then reported with; a link that loses the tag, or every link once the tag is
 * switched off, redirects without one.
 */
export function describeTagTrackingJourney(endpoints: () => Endpoints, newTenant: () => Promise<{ apiKey: string }>) {
  describe('conversion tracking on a tag', () => {
    /** The click id parameter the redirect of `code` adds to the target, or null. */
    const clickIdOf = async (code: string, param = 'sl_cid') => {
      const res = await redirectOf(endpoints(), code);
      expect(res.status).toBe(302);
      return new URL(res.headers.get('location')!).searchParams.get(param);
    };

    it('switched on, every link carrying the tag gets click ids (tagged before or later); untagged or switched off, none', async () => {
      const { apiKey } = await newTenant();
      const g = endpoints().generation;
      const link = async (body: object) => {
        const res = await api(g, 'POST', '/api/v1/links', apiKey, { url: `https://shop.example/tag?t=${Date.now()}`, ...body });
        expect(res.status).toBe(201);
        return res.body.code as string;
      };
      const before = await link({ tags: ['spring sale', 'ads'] });
      const untagged = await link({ title: 'tagged later' });
      const otherTag = await link({ tags: ['autumn'] });
      expect(await clickIdOf(before)).toBeNull();
      expect((await api(g, 'GET', `/api/v1/tags/${encodeURIComponent('spring sale')}`, apiKey)).body).toEqual({
        tag: 'spring sale',
        trackConversions: false,
        conversionParam: 'sl_cid',
      });

      const on = await api(g, 'PATCH', `/api/v1/tags/${encodeURIComponent('spring sale')}`, apiKey, { trackConversions: true });
      expect(on.status).toBe(200);
      expect(on.body).toEqual({ tag: 'spring sale', trackConversions: true, conversionParam: 'sl_cid', linksUpdated: 1 });
      await propagated(Date.now());
      const clickId = await clickIdOf(before);
      expect(clickId).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(await clickIdOf(before)).not.toBe(clickId); // one per click
      expect(await clickIdOf(otherTag)).toBeNull();

      // The click id is a click of the tenant's link: a lead reported with it counts.
      const backend = await api(g, 'POST', '/api/v1/keys', apiKey, { name: 'backend', scopes: ['conversions:write'] });
      const lead = await api(g, 'POST', '/api/v1/track/lead', backend.body.apiKey as string, { clickId, eventName: 'Sign up', customerId: 'cus_tag' });
      expect(lead.status).toBe(201);
      expect(lead.body.event).toMatchObject({ link: { code: before } });

      // Tagged later, and created with the tag: tracked.
      expect((await api(g, 'PATCH', `/api/v1/links/${untagged}`, apiKey, { tags: ['spring sale'] })).status).toBe(200);
      const created = await link({ tags: ['spring sale'] });
      await propagated(Date.now());
      expect(await clickIdOf(untagged)).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(await clickIdOf(created)).toMatch(/^[A-Za-z0-9_-]{22}$/);

      // The tag removed from a link: not tracked any more; the others still are.
      expect((await api(g, 'PATCH', `/api/v1/links/${before}`, apiKey, { tags: ['ads'] })).status).toBe(200);
      await propagated(Date.now());
      expect(await clickIdOf(before)).toBeNull();
      expect(await clickIdOf(untagged)).not.toBeNull();

      // Switched off: no link of the tag is tracked.
      const off = await api(g, 'PATCH', `/api/v1/tags/${encodeURIComponent('spring sale')}`, apiKey, { trackConversions: false });
      expect(off.body).toEqual({ tag: 'spring sale', trackConversions: false, conversionParam: 'sl_cid', linksUpdated: 2 });
      await propagated(Date.now());
      expect(await clickIdOf(untagged)).toBeNull();
      expect(await clickIdOf(created)).toBeNull();
    }, 60_000);

    it('takes a parameter of its own; another tenant’s links with the same tag are not tracked; bad input is 400 with a stable code', async () => {
      const { apiKey } = await newTenant();
      const { apiKey: otherKey } = await newTenant();
      const g = endpoints().generation;
      const mine = await api(g, 'POST', '/api/v1/links', apiKey, { url: 'https://shop.example/mine', tags: ['promo'] });
      const theirs = await api(g, 'POST', '/api/v1/links', otherKey, { url: 'https://shop.example/theirs', tags: ['promo'] });
      const on = await api(g, 'PATCH', '/api/v1/tags/promo', apiKey, { trackConversions: true, conversionParam: 'cid' });
      expect(on.body).toMatchObject({ trackConversions: true, conversionParam: 'cid', linksUpdated: 1 });
      await propagated(Date.now());
      expect(await clickIdOf(mine.body.code as string, 'cid')).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(await clickIdOf(theirs.body.code as string, 'cid')).toBeNull();
      expect((await api(g, 'GET', '/api/v1/tags/promo', otherKey)).body).toMatchObject({ trackConversions: false });

      for (const [body, field] of [
        [{ trackConversions: 'yes' }, 'trackConversions'],
        [{ trackConversions: true, conversionParam: '1abc' }, 'conversionParam'],
        [{ trackConversions: true, color: 'red' }, undefined],
      ] as const) {
        const res = await api(g, 'PATCH', '/api/v1/tags/promo', apiKey, body);
        expect({ status: res.status, code: res.body.code, type: res.headers.get('content-type') }).toEqual({
          status: 400,
          code: 'VALIDATION_FAILED',
          type: expect.stringContaining('problem+json'),
        });
        if (field) expect(JSON.stringify(res.body)).toContain(field);
      }
      expect((await api(g, 'PATCH', `/api/v1/tags/${'x'.repeat(60)}`, apiKey, { trackConversions: true })).body.code).toBe('VALIDATION_FAILED');
      expect((await api(g, 'PATCH', '/api/v1/tags/promo', null, { trackConversions: true })).status).toBe(401);
    }, 60_000);
  });
}
