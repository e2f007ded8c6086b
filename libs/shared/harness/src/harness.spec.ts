import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { byLabel, metric, parseMetrics, total } from './metrics';
import { ProcessGroup, startCommand, whenServing } from './process';
import { datedResultFile, markdownTable, median, share } from './report';
import { freePort, appPorts } from './ports';
import { requestOf } from './load/rig';

describe('harness', () => {
  it('takes a load path apart into the path and the headers after its tabs', () => {
    expect(requestOf('/abc?x=1')).toEqual({ path: '/abc?x=1', headers: {} });
    expect(requestOf('/abc\tX-Forwarded-For: 203.0.113.7\tUser-Agent: Mozilla/5.0 (X11; Linux: x86_64)')).toEqual({
      path: '/abc',
      headers: { 'X-Forwarded-For': '203.0.113.7', 'User-Agent': 'Mozilla/5.0 (X11; Linux: x86_64)' },
    });
  });

  const text = [
    '# HELP shortlink_redirect_lookup_total Where a redirect lookup was answered',
    '# TYPE shortlink_redirect_lookup_total counter',
    'shortlink_redirect_lookup_total{source="l1",app="redirect"} 90',
    'shortlink_redirect_lookup_total{app="redirect",source="redis"} 10',
    'shortlink_click_events_dropped_total{app="redirect"} 3',
    'shortlink_click_buffer_size 7',
  ].join('\n');

  it('parses Prometheus text without the app label, sums by label and in total', () => {
    const m = parseMetrics(text);
    expect(metric(m, 'shortlink_redirect_lookup_total{source="l1"}')).toBe(90);
    expect(metric(m, 'shortlink_redirect_lookup_total{source="redis"}')).toBe(10);
    expect(metric(m, 'shortlink_click_events_dropped_total')).toBe(3);
    expect(metric(m, 'shortlink_click_buffer_size')).toBe(7);
    expect(metric(m, 'missing_total')).toBe(0);
    expect(Object.fromEntries(byLabel(m, 'shortlink_redirect_lookup_total', 'source'))).toEqual({ l1: 90, redis: 10 });
    expect(total(m, 'shortlink_redirect_lookup_total')).toBe(100);
  });

  it('writes markdown tables with the alignment row', () => {
    expect(
      markdownTable(
        [
          ['case', 'l'],
          ['rps', 'r'],
        ],
        [
          ['a', 1],
          ['b', '2'],
        ],
      ),
    ).toBe('| case | rps |\n|---|---:|\n| a | 1 |\n| b | 2 |');
  });

  it('computes medians and shares', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(share(5, 5)).toBe('100');
    expect(share(1, 10_000)).toBe('<0.1');
    expect(share(1, 4)).toBe('25.0');
  });

  it('numbers a result file that exists already', () => {
    const dir = mkdtempSync(join(tmpdir(), 'harness-spec-'));
    try {
      const date = new Date(2026, 11, 3);
      const first = datedResultFile(dir, 'redirect', date);
      expect(first).toBe(join(dir, 'redirect-2026-12-03.md'));
      writeFileSync(first, '');
      expect(datedResultFile(dir, 'redirect', date)).toBe(join(dir, 'redirect-2026-12-03-2.md'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gives an app distinct public and admin ports', async () => {
    const p = await appPorts('redirect');
    expect(p.env.REDIRECT_PORT).not.toBe(p.env.REDIRECT_ADMIN_PORT);
    expect(p.base).toBe(`http://127.0.0.1:${p.env.REDIRECT_PORT}`);
    expect(p.admin).toBe(`http://127.0.0.1:${p.env.REDIRECT_ADMIN_PORT}`);
    expect(await freePort()).toBeGreaterThan(0);
  });

  it('stops what a group started by PID, with SIGKILL when SIGTERM is ignored', async () => {
    const group = new ProcessGroup({ graceMs: 300 });
    const stubborn = startCommand('sh', ['-c', "trap '' TERM; echo ready; while :; do sleep 0.1; done"], { group });
    const polite = startCommand('sleep', ['30'], { group });
    await whenServing(stubborn, 'the shell to start', async () => stubborn.output().includes('ready'), 5_000, 20);
    expect(stubborn.alive && polite.alive).toBe(true);
    await group.stopAll();
    expect(stubborn.alive).toBe(false);
    expect(stubborn.child.signalCode).toBe('SIGKILL');
    expect(polite.child.signalCode).toBe('SIGTERM');
  });

  it('fails at once, with the output, when the process exits while waited for', async () => {
    const p = startCommand('sh', ['-c', 'echo broken config; exit 3']);
    await expect(whenServing(p, 'never', async () => false, 5_000, 20)).rejects.toThrow(/exited \(code 3.*\n[\s\S]*broken config/);
  });
});
