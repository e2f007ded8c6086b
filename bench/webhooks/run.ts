/**
 * Webhook delivery bench, on demand, on the local real stack (`set -a; . <stack.env>; set +a`):
 * the generation and analytics apps with BUS_DRIVER=kafka (the events topic, the deliverer in the
 * analytics app) on the MariaDB meta database, a receiver (node:http, answering 204) in this process.
 *  - latency: links created one at a time at --rate/s; for each, the time from the API's answer (the
 *    event is published after it) to the receiver getting the signed message: p50/p95/p99.
 *  - throughput: --burst links created by 32 clients while the analytics app is stopped (their events
 *    wait on the topic), --endpoints endpoints each; the app started again, deliveries per second at
 *    the receiver from the first message to the last (the deliverer's drain rate).
 * Prints a markdown table and writes bench/results/webhooks-<date>.md. 127.0.0.1 only.
 *   node -r ./tools/register.js bench/webhooks/run.ts [--rate=20] [--events=200] [--burst=1000] [--endpoints=2]
 */
import { randomUUID } from 'crypto';
import { createServer } from 'http';
import { AddressInfo } from 'net';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { webhookBenchEnv } from './apps-env';
import { App, eventually, loadAverages, machineFacts, markdownTable, pooled, sleep, startApp, writeResultFile } from '@shortlink/harness';

const option = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const RATE = Number(option('rate', '20'));
const EVENTS = Number(option('events', '200'));
const BURST = Number(option('burst', '1000'));
const ENDPOINTS = Number(option('endpoints', '2'));
const API_KEY = `sl_bench_${randomUUID().replace(/-/g, '')}`;
const log = (m: string) => process.stderr.write(`[webhooks] ${m}\n`);

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];

async function main() {
  const started = new Date();
  const startLoad = loadAverages();
  const run = `bench-webhooks.${Date.now().toString(36)}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-webhooks-'));
  const arrivals = new Map<string, number>(); // code → when its link.created reached the receiver (first endpoint)
  let delivered = 0;
  let firstAt = 0;
  let lastAt = 0;
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const at = performance.now();
      delivered++;
      firstAt ||= at;
      lastAt = at;
      const message = JSON.parse(body) as { type: string; data: { link?: { code: string } } };
      if (message.type === 'link.created' && message.data.link && !arrivals.has(message.data.link.code)) arrivals.set(message.data.link.code, at);
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  const apps: App[] = [];
  try {
    const env = webhookBenchEnv(run, dataDir, API_KEY);
    const generation = await startApp('generation', env);
    apps.push(generation);
    apps.push(await startApp('analytics', env));
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${generation.base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, string> };
    };
    for (let i = 0; i < ENDPOINTS; i++) {
      const made = await post('/api/v1/webhooks', { url: `${url}?endpoint=${i}`, events: ['link.created'] });
      if (made.status !== 201) throw new Error(`creating a webhook answered ${made.status}`);
    }
    // Warm-up: the consumer group joined, the producer connected, the JIT warm.
    const warm = await post('/api/v1/links', { url: 'https://example.com/warm' });
    await eventually('the warm-up delivery', async () => arrivals.has(warm.body.code), 120_000);

    log(`latency: ${EVENTS} links at ${RATE}/s`);
    const answered = new Map<string, number>();
    const start = performance.now();
    for (let i = 0; i < EVENTS; i++) {
      await sleep(Math.max(0, start + (i * 1000) / RATE - performance.now()));
      const made = await post('/api/v1/links', { url: `https://example.com/latency/${i}` });
      answered.set(made.body.code, performance.now());
    }
    await eventually('every latency delivery', async () => [...answered.keys()].every((c) => arrivals.has(c)), 120_000);
    const latencies = [...answered.entries()].map(([code, at]) => arrivals.get(code)! - at).sort((a, b) => a - b);

    log(`throughput: ${BURST} links while the deliverer is stopped, ${ENDPOINTS} endpoints, then the deliverer drains them`);
    // The analytics app stopped, the events wait on the topic: the drain measures the deliverer, not the creates.
    await apps.pop()!.stop();
    await pooled(BURST, 32, async (i) => post('/api/v1/links', { url: `https://example.com/burst/${i}` }));
    delivered = 0;
    firstAt = 0;
    apps.push(await startApp('analytics', env));
    await eventually('every burst delivery', async () => delivered >= BURST * ENDPOINTS, 300_000, 100);
    const perSecond = (delivered / (lastAt - firstAt)) * 1000;

    const ms = (n: number) => n.toFixed(1);
    const table = markdownTable(
      [
        ['measure', 'l'],
        ['value', 'r'],
      ],
      [
        ['event → receiver p50 (ms)', ms(pct(latencies, 0.5))],
        ['event → receiver p95 (ms)', ms(pct(latencies, 0.95))],
        ['event → receiver p99 (ms)', ms(pct(latencies, 0.99))],
        ['event → receiver max (ms)', ms(latencies[latencies.length - 1])],
        [`deliveries/s (${BURST} events × ${ENDPOINTS} endpoints)`, perSecond.toFixed(0)],
      ],
    );
    const report = [
      `# Webhook delivery bench, ${started.toISOString()}`,
      '',
      ...machineFacts({ start: started, startLoad }),
      '',
      `Generation and analytics apps on the real stack (Kafka events topic, MariaDB meta database); receiver in the bench process on 127.0.0.1. Latency: ${EVENTS} links created at ${RATE}/s, from the API's answer to the receiver. Throughput: ${BURST} links created while the analytics app was stopped, ${ENDPOINTS} endpoints each, drained by the deliverer once it started (first to last message).`,
      '',
      table,
      '',
    ].join('\n');
    process.stdout.write(`${report}\n`);
    const file = writeResultFile('webhooks', started, report);
    log(`written to ${file}`);
  } finally {
    await Promise.all(apps.map((a) => a.stop()));
    await new Promise<void>((r) => receiver.close(() => r()));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    log(`failed: ${(e as Error).stack ?? e}`);
    process.exit(1);
  },
);
