import QRCode from 'qrcode';
import { Endpoints, eventually } from '@shortlink/harness';
import { API_KEY, createLink, redirectOf } from './support';

type Item = { value: string | null; country?: string; region?: string | null; clicks: number };
type Visit = { source: string; country: string | null; region: string | null; city: string | null };

/**
 * QR scans counted apart, and cities, on either profile (embedded.e2e-spec.ts,
 * real-stack.e2e-spec.ts). The processes run with GEO_DATABASE=city and trust loopback as a proxy, so X-Forwarded-For carries the visitors'
 * addresses. A visitor scans the link's QR code twice (its URL, `/{code}/~`, as the QR code of the
 * API encodes it), another clicks the link; both land on exactly the link's target, and analytics
 * tells them apart, with the city of each.
 */
export function describeSourcesJourney(endpoints: () => Endpoints) {
  describe('QR scans and cities', () => {
    const target = `https://example.com/landing?from=print&t=${Date.now()}`;
    let code: string;
    let shortUrl: string;
    let from: number;
    const json = async <T>(path: string): Promise<T> => {
      const res = await fetch(`${endpoints().analytics}${path}`, { headers: { 'x-api-key': API_KEY } });
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      return (await res.json()) as T;
    };

    beforeAll(async () => {
      from = Math.floor(Date.now() / 1000) - 120;
      const created = await createLink(endpoints(), { url: target });
      code = created.body.code as string;
      shortUrl = created.body.shortUrl as string;
    });

    it('draws the QR code of the short URL with the scan marker: `{shortUrl}/~`', async () => {
      const res = await fetch(`${endpoints().generation}/api/v1/links/${code}/qr`, { headers: { 'x-api-key': API_KEY } });
      expect(res.status).toBe(200);
      const options = { width: 256, margin: 2, errorCorrectionLevel: 'M' as const, type: 'svg' as const };
      expect(await res.text()).toBe(await QRCode.toString(`${shortUrl}/~`, options));
    });

    it("sends a scan and a click to exactly the link's target: the marker reaches neither the target nor its query", async () => {
      const scan = await redirectOf(endpoints(), `${code}/~`, { 'x-forwarded-for': '8.8.8.8' });
      const click = await redirectOf(endpoints(), code, { 'x-forwarded-for': '81.2.69.142' });
      expect([scan.status, scan.headers.get('location'), scan.headers.get('cache-control')]).toEqual([
        click.status,
        click.headers.get('location'),
        click.headers.get('cache-control'),
      ]);
      expect(scan.headers.get('location')).toBe(target);
      // The visitor's own query goes on to the target, as from the plain short URL; the marker does not.
      const withQuery = await redirectOf(endpoints(), `${code}/~?ref=poster`, { 'x-forwarded-for': '8.8.8.8' });
      expect(withQuery.headers.get('location')).toBe(`${target}&ref=poster`);
    });

    it('counts the scans as qr and the click as link, with the city, region and country of each, in the breakdowns and the raw visits', async () => {
      const sources = await eventually(
        'the scans and the click in the sources breakdown',
        async () => {
          const b = await json<{ items: Item[] }>(`/api/v1/links/${code}/breakdown/sources?from=${from}`);
          return b.items.reduce((n, i) => n + i.clicks, 0) === 3 ? b : null;
        },
        60_000,
        250,
      );
      expect(sources.items.map((i) => [i.value, i.clicks])).toEqual([
        ['qr', 2],
        ['link', 1],
      ]);
      const cities = await json<{ items: Item[] }>(`/api/v1/links/${code}/breakdown/cities?from=${from}`);
      expect(cities.items.map((i) => [i.value, i.region, i.country, i.clicks])).toEqual([
        ['Mountain View', 'California', 'US', 2],
        ['London', 'England', 'GB', 1],
      ]);
      const visits = await eventually(
        'the raw visits',
        async () => {
          const page = await json<{ visits: Visit[] }>(`/api/v1/links/${code}/visits`);
          return page.visits.length === 3 ? page.visits : null;
        },
        30_000,
        250,
      );
      expect(visits.map((v) => [v.source, v.country, v.region, v.city]).sort()).toEqual([
        ['link', 'GB', 'England', 'London'],
        ['qr', 'US', 'California', 'Mountain View'],
        ['qr', 'US', 'California', 'Mountain View'],
      ]);
    });
  });
}
