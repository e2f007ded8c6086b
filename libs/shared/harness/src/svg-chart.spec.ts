import { lineChartsSvg } from './svg-chart';

describe('lineChartsSvg', () => {
  it('draws one panel per series, a point per x, with escaped titles and value labels', () => {
    const svg = lineChartsSvg(
      'Links & figures',
      [100_000, 1_000_000, 10_000_000],
      [
        { title: 'p99 <ms>', values: [5, 12, 40] },
        { title: 'RSS MiB', values: [180, 240, NaN] },
      ],
    );
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('Links &amp; figures');
    expect(svg).toContain('p99 &lt;ms&gt;');
    expect(svg.match(/<polyline/g)).toHaveLength(2);
    expect(svg.match(/<circle/g)).toHaveLength(5); // the missing value draws no point
    expect(svg).toContain('>10M<');
    expect(svg).toContain('>40<');
  });

  it('spaces the x axis by decades when it spans more than one', () => {
    const xs = (svg: string) => [...svg.matchAll(/<circle cx="([\d.]+)"/g)].map((m) => Number(m[1]));
    const [a, b, c] = xs(lineChartsSvg('t', [1e5, 1e6, 1e7], [{ title: 's', values: [1, 2, 3] }]));
    expect(Math.abs(b - a - (c - b))).toBeLessThan(0.5);
  });
});
