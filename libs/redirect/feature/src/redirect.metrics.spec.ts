import { Histogram, Registry } from 'prom-client';
import { ReadPathMetrics } from '@shortlink/read-path';
import { RedirectMetrics } from './redirect.metrics';

describe('RedirectMetrics', () => {
  it('reports the click buffer size as read at scrape time', async () => {
    const registry = new Registry();
    const metrics = new RedirectMetrics(registry);
    expect(await registry.metrics()).toMatch(/^shortlink_click_buffer_size 0$/m);
    let size = 17;
    metrics.readClickBufferSize(() => size);
    expect(await registry.metrics()).toMatch(/^shortlink_click_buffer_size 17$/m);
    size = 3;
    expect(await registry.metrics()).toMatch(/^shortlink_click_buffer_size 3$/m);
  });
});

describe('RedirectMetrics counters', () => {
  const value = (text: string, series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);

  it('count every status and lookup source, exported on each scrape', async () => {
    const registry = new Registry();
    const metrics = new RedirectMetrics(registry);
    const readPath = new ReadPathMetrics(registry);
    let text = await registry.metrics();
    expect(value(text, 'shortlink_redirect_lookup_total{source="l1"}')).toBe(0);
    expect(value(text, 'shortlink_redirect_lookup_total{source="snapshot"}')).toBe(0);

    for (let i = 0; i < 5; i++) metrics.status(302);
    metrics.status(404);
    for (let i = 0; i < 3; i++) readPath.lookup('l1');
    text = await registry.metrics();
    expect(value(text, 'shortlink_redirect_requests_total{status="302"}')).toBe(5);
    expect(value(text, 'shortlink_redirect_requests_total{status="404"}')).toBe(1);
    expect(value(text, 'shortlink_redirect_lookup_total{source="l1"}')).toBe(3);

    // A second scrape neither loses nor double-counts what the first one took.
    metrics.status(302);
    text = await registry.metrics();
    expect(value(text, 'shortlink_redirect_requests_total{status="302"}')).toBe(6);
    expect(value(text, 'shortlink_redirect_lookup_total{source="l1"}')).toBe(3);
  });
});

describe('RedirectMetrics duration', () => {
  it("exports the handling times exactly as prom-client's Histogram would, tallied off the request's path", async () => {
    const registry = new Registry();
    const metrics = new RedirectMetrics(registry);
    const reference = new Registry();
    const histogram = new Histogram({
      name: 'shortlink_redirect_duration_seconds',
      help: 'Redirect handling time',
      buckets: [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [reference],
    });
    const seen = [0.00005, 0.0002, 0.0003, 0.0009, 0.004, 0.004, 0.09, 0.3, 2, 0.0001];
    for (const s of seen) {
      metrics.duration.observe(s);
      histogram.observe(s);
    }
    const series = async (r: Registry) => (await r.metrics()).split('\n').filter((l) => l.startsWith('shortlink_redirect_duration_seconds'));
    expect(await series(registry)).toEqual(await series(reference));
    expect(await series(registry)).toContain('shortlink_redirect_duration_seconds_count 10');
  });
});
