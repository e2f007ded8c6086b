import { Registry } from 'prom-client';
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
