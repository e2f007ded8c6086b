/**
 * Webhook outage run, on demand, on the local real stack (`set -a; . <stack.env>; set +a`).
 * Not a speed bench: it shows that a receiver that is down for five minutes loses nothing and
 * applies nothing twice, with the production retry schedule (WEBHOOK_RETRY_* left at their defaults).
 *  - The generation and analytics apps (BUS_DRIVER=kafka, the deliverer in the analytics app) and a
 *    receiver as a customer writes one: node:http, `standardwebhooks` verification, idempotent by
 *    `webhook-id`.
 *  - The receiver stops listening (connections refused) for --outage seconds while links are
 *    created, edited and deleted at --rate/s; then it listens again on the same port.
 *  - Every event caused must be applied exactly once: it waits for that (up to --drain seconds) and
 *    fails (exit 1) on a lost, a doubly applied or an unverifiable message.
 * Prints a markdown report and writes bench/results/webhook-outage-<date>.md. 127.0.0.1 only.
 *   node -r ./tools/register.js bench/webhooks/outage.ts [--outage=300] [--rate=1] [--drain=900]
 */
import { randomUUID } from 'crypto';
import { createServer, IncomingHttpHeaders, Server } from 'http';
import { AddressInfo } from 'net';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Webhook } from 'standardwebhooks';
import { App, eventually, loadAverages, machineFacts, markdownTable, sleep, startApp, writeResultFile } from '@shortlink/harness';
import { webhookBenchEnv } from './apps-env';

const option = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const OUTAGE_S = Number(option('outage', '300'));
const RATE = Number(option('rate', '1'));
const DRAIN_S = Number(option('drain', '900'));
const API_KEY = `sl_bench_${randomUUID().replace(/-/g, '')}`;
const log = (m: string) => process.stderr.write(`[webhook-outage] ${m}\n`);

/** The customer's receiver: verifies every message, applies each `webhook-id` once, counts what it saw. */
class IdempotentReceiver {
  readonly applied = new Map<string, string>(); // webhook-id → "type code"
  verifier: Webhook | null = null;
  received = 0;
  appliedTwice = 0;
  duplicatesIgnored = 0;
  unverified = 0;
  lastAppliedAt = 0;
  private server: Server | null = null;
  port = 0;

  async listen(): Promise<void> {
    const server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        this.received++;
        const message = this.verify(body, req.headers);
        if (message === null) {
          this.unverified++;
          res.statusCode = 401;
          return res.end();
        }
        const id = String(req.headers['webhook-id']);
        if (this.applied.has(id)) this.duplicatesIgnored++;
        else {
          const link = (message.data as { link?: { code?: string } }).link;
          this.applied.set(id, `${message.type} ${link?.code}`);
          this.lastAppliedAt = Date.now();
        }
        res.statusCode = 204;
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Down as a crashed receiver is: the port refuses connections, open ones are cut. */
  async stop(): Promise<void> {
    const server = this.server!;
    this.server = null;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  /** Occurrences of each "type code" among the applied messages. */
  appliedCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const what of this.applied.values()) counts.set(what, (counts.get(what) ?? 0) + 1);
    return counts;
  }

  private verify(body: string, headers: IncomingHttpHeaders): { type: string; data: Record<string, unknown> } | null {
    try {
      return this.verifier!.verify(body, headers as Record<string, string>) as { type: string; data: Record<string, unknown> };
    } catch {
      return null;
    }
  }
}

async function main() {
  const started = new Date();
  const startLoad = loadAverages();
  const run = `bench-outage.${Date.now().toString(36)}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-outage-'));
  const receiver = new IdempotentReceiver();
  await receiver.listen();
  const apps: App[] = [];
  try {
    const env = webhookBenchEnv(run, dataDir, API_KEY);
    const generation = await startApp('generation', env);
    apps.push(generation);
    apps.push(await startApp('analytics', env));
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${generation.base}${path}`, {
        method,
        headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
      return (text ? JSON.parse(text) : {}) as Record<string, string>;
    };
    const hook = await call('POST', '/api/v1/webhooks', {
      url: `http://127.0.0.1:${receiver.port}/hooks`,
      events: ['link.created', 'link.updated', 'link.deleted'],
    });
    receiver.verifier = new Webhook(hook.secret);
    const expected: string[] = [];
    const warm = await call('POST', '/api/v1/links', { url: 'https://example.com/outage-warm' });
    expected.push(`link.created ${warm.code}`);
    await eventually('the warm-up delivery', async () => receiver.applied.size === 1, 120_000);

    log(`receiver down for ${OUTAGE_S} s; links created, edited and deleted at ${RATE}/s meanwhile`);
    await receiver.stop();
    const downAt = Date.now();
    for (let i = 0; Date.now() - downAt < OUTAGE_S * 1000; i++) {
      const made = await call('POST', '/api/v1/links', { url: `https://example.com/outage/${i}` });
      expected.push(`link.created ${made.code}`);
      if (i % 3 === 1) {
        await call('PATCH', `/api/v1/links/${made.code}`, { title: `edited while down ${i}` });
        expected.push(`link.updated ${made.code}`);
      }
      if (i % 5 === 2) {
        await call('DELETE', `/api/v1/links/${made.code}`);
        expected.push(`link.deleted ${made.code}`);
      }
      await sleep(Math.max(0, downAt + ((i + 1) * 1000) / RATE - Date.now()));
    }
    const during = await call('GET', `/api/v1/webhooks/${hook.id}/deliveries?limit=100`);
    const pendingDuring = (during.deliveries as unknown as { status: string; attempts: number }[]).filter((d) => d.status === 'pending');
    await receiver.listen();
    const upAt = Date.now();
    log(`receiver listening again after ${((upAt - downAt) / 1000).toFixed(0)} s; ${expected.length} messages expected`);
    const expectedCounts = new Map<string, number>();
    for (const what of expected) expectedCounts.set(what, (expectedCounts.get(what) ?? 0) + 1);
    const allApplied = () => [...expectedCounts].every(([what, n]) => receiver.appliedCounts().get(what) === n);
    await eventually('every message of the outage applied', async () => allApplied(), DRAIN_S * 1000, 1000).catch(() => undefined);
    await sleep(5000); // anything late or doubled would arrive now
    const counts = receiver.appliedCounts();
    const lost = [...expectedCounts].filter(([what, n]) => (counts.get(what) ?? 0) < n).map(([what]) => what);
    const appliedTwice = [...counts].filter(([what, n]) => n > (expectedCounts.get(what) ?? 0)).map(([what]) => what);
    const unexpected = [...counts.keys()].filter((what) => !expectedCounts.has(what));
    const ok = lost.length === 0 && appliedTwice.length === 0 && unexpected.length === 0 && receiver.unverified === 0;

    const table = markdownTable(
      [
        ['measure', 'l'],
        ['value', 'r'],
      ],
      [
        ['receiver down (s)', ((upAt - downAt) / 1000).toFixed(0)],
        ['messages caused (created, updated, deleted)', String(expected.length)],
        ['deliveries pending when it came back (newest 100 listed)', String(pendingDuring.length)],
        ['most attempts of one of them by then', String(Math.max(0, ...pendingDuring.map((d) => d.attempts)))],
        ['messages applied once', String(receiver.applied.size)],
        ['lost', String(lost.length)],
        ['applied twice (same event, two webhook-ids)', String(appliedTwice.length)],
        ['same webhook-id received again, ignored', String(receiver.duplicatesIgnored)],
        ['failed verification', String(receiver.unverified)],
        ['requests received after the restart', String(receiver.received - 1)],
        ['last message applied after the restart (s)', ((receiver.lastAppliedAt - upAt) / 1000).toFixed(0)],
        ['verdict', ok ? 'nothing lost, nothing applied twice' : '**FAILED**'],
      ],
    );
    const report = [
      `# Webhook outage run, ${started.toISOString()}`,
      '',
      ...machineFacts({ start: started, startLoad }),
      '',
      `Generation and analytics apps on the real stack (Kafka events topic, MariaDB meta database), the default retry schedule (5 s doubling, at most 1 h, for 24 h). A receiver verifying with standardwebhooks and idempotent by webhook-id was down ${OUTAGE_S} s while links were created at ${RATE}/s (every third edited, every fifth deleted), then listened again on the same port.`,
      '',
      table,
      '',
      lost.length ? `Lost: ${lost.slice(0, 20).join(', ')}` : '',
      appliedTwice.length ? `Applied twice: ${appliedTwice.slice(0, 20).join(', ')}` : '',
    ].join('\n');
    process.stdout.write(`${report}\n`);
    const file = writeResultFile('webhook-outage', started, report);
    log(`written to ${file}`);
    if (!ok) throw new Error('messages were lost or applied twice');
  } finally {
    await Promise.all(apps.map((a) => a.stop()));
    await receiver.stop().catch(() => undefined);
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
