/** HTTP over keep-alive agents: one request that never rejects, bounded and open-loop batches, summaries. */
import * as http from 'http';

export interface Reply {
  status: number; // 0: network error or timeout
  location: string | null;
  retryAfter: string | null;
  contentType: string | null;
  body: string;
  ms: number;
  error: string | null;
  startedAt: number;
}

/** One request over a keep-alive agent; never rejects (a network error is status 0). */
export function send(agent: http.Agent, base: string, path: string, method: 'GET' | 'HEAD' = 'GET', timeoutMs = 5000): Promise<Reply> {
  const startedAt = Date.now();
  const url = new URL(path, base);
  return new Promise((resolve) => {
    let done = false;
    const finish = (r: Omit<Reply, 'ms' | 'startedAt'>) => {
      if (done) return;
      done = true;
      resolve({ ...r, ms: Date.now() - startedAt, startedAt });
    };
    const req = http.request({ agent, host: url.hostname, port: url.port, path: url.pathname + url.search, method }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () =>
        finish({
          status: res.statusCode ?? 0,
          location: (res.headers.location as string | undefined) ?? null,
          retryAfter: (res.headers['retry-after'] as string | undefined) ?? null,
          contentType: (res.headers['content-type'] as string | undefined) ?? null,
          body,
          error: null,
        }),
      );
      res.on('error', (e) => finish({ status: 0, location: null, retryAfter: null, contentType: null, body, error: e.message }));
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no response within ${timeoutMs} ms`)));
    req.on('error', (e) => finish({ status: 0, location: null, retryAfter: null, contentType: null, body: '', error: e.message }));
    req.end();
  });
}

/** A request whose headers are sent; `send()` sends its body and resolves with the answer. */
export interface LaterPost {
  send(): Promise<{ status: number; body: string }>;
}

/**
 * A urlencoded POST on a connection of its own whose headers leave now and whose body leaves on
 * `send()`: what a client does that opens many requests first and completes them later.
 */
export function postLater(base: string, path: string, body: string, headers: Record<string, string> = {}): LaterPost {
  const url = new URL(path, base);
  const req = http.request({
    agent: false,
    host: url.hostname,
    port: url.port,
    path: url.pathname + url.search,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)), ...headers },
  });
  const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res
        .setEncoding('utf8')
        .on('data', (c) => (text += c))
        .on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
  });
  answered.catch(() => undefined); // observed by send(); not an unhandled rejection before it is called
  req.flushHeaders();
  return { send: () => (req.end(body), answered) };
}

export const keepAliveAgent = () => new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 2048 });

/** Runs `total` jobs with at most `concurrency` in flight (bounded by count and deadline). */
export async function pooled<T = Reply>(total: number, concurrency: number, one: (i: number) => Promise<T>, deadlineMs = 60_000): Promise<T[]> {
  const out = new Array<T>(total);
  const deadline = Date.now() + deadlineMs;
  let next = 0;
  const worker = async () => {
    while (next < total) {
      if (Date.now() > deadline) throw new Error(`pooled load: deadline of ${deadlineMs} ms passed after ${next} of ${total} requests`);
      const i = next++;
      out[i] = await one(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  return out;
}

/**
 * Open-loop steady load: `ratePerSecond` requests for `durationMs` (a fixed count), started on a
 * 10 ms tick whatever the responses do, so a stall shows up as slow or failed requests.
 */
export async function steadyLoad(ratePerSecond: number, durationMs: number, one: (i: number) => Promise<Reply>): Promise<Reply[]> {
  const total = Math.round((ratePerSecond * durationMs) / 1000);
  const pending: Array<Promise<Reply>> = [];
  const t0 = Date.now();
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((Date.now() - t0) * ratePerSecond) / 1000));
      while (pending.length < due) pending.push(one(pending.length));
      if (pending.length >= total || Date.now() - t0 > durationMs + 5000) {
        clearInterval(timer);
        resolve();
      }
    }, 10);
  });
  return Promise.all(pending);
}

/** Summary of a batch of replies for assertion messages. */
export function tally(replies: readonly Reply[]): Record<string, number> {
  const t: Record<string, number> = {};
  for (const r of replies) {
    const k = r.status === 0 ? `error:${r.error}` : String(r.status);
    t[k] = (t[k] ?? 0) + 1;
  }
  return t;
}

export function latency(replies: readonly Reply[]): { p50: number; p99: number; max: number } {
  const ms = replies.map((r) => r.ms).sort((a, b) => a - b);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? 0;
  return { p50: at(0.5), p99: at(0.99), max: ms[ms.length - 1] ?? 0 };
}
