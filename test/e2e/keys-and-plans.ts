import { Agent, request } from 'http';
import { api } from './tenant-journey';

/** A batch request kept open, as a client trickling its rows would keep it. */
export interface HeldBatch {
  /** Sends the end of the body and resolves with the answer's status once it has ended. */
  finish(): Promise<number>;
  /** Drops the connection, as a client that gives up does. */
  abort(): void;
}

/**
 * Starts a batch with two rows and leaves its body open. Resolves once the first answer line has
 * arrived (the apps must run with BATCH_CHUNK_ROWS=1: a chunk is answered once the next one is
 * read), so the batch is known to run: it passed the guard and holds its slot.
 */
export function holdBatch(base: string, apiKey: string): Promise<HeldBatch> {
  return new Promise((resolve, reject) => {
    let text = '';
    let ended: (status: number) => void = () => undefined;
    const done = new Promise<number>((r) => (ended = r));
    const headers = { 'content-type': 'application/x-ndjson', 'x-api-key': apiKey, 'transfer-encoding': 'chunked' };
    const req = request(`${base}/api/v1/links/batch`, { method: 'POST', headers }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        if (res.statusCode !== 200) return;
        if (text.includes('\n')) resolve({ finish: () => (req.end(), done), abort: () => req.destroy() });
      });
      res.on('end', () => {
        ended(res.statusCode ?? 0);
        if (res.statusCode !== 200) reject(new Error(`the held batch answered ${res.statusCode}: ${text}`));
      });
      res.on('error', () => ended(res.statusCode ?? 0));
    });
    req.on('error', (e) => (text ? ended(0) : reject(e)));
    for (const i of [1, 2]) req.write(JSON.stringify({ url: `https://example.com/held-batch/${i}` }) + '\n');
  });
}

/** A complete one-row batch: its status and the problem's code when refused. */
export async function quickBatch(base: string, apiKey: string): Promise<{ status: number; code?: string; retryAfter: string | null }> {
  const headers = { 'content-type': 'application/x-ndjson', 'x-api-key': apiKey };
  const res = await fetch(`${base}/api/v1/links/batch`, { method: 'POST', headers, body: JSON.stringify({ url: 'https://example.com/quick-batch' }) });
  const text = await res.text();
  return { status: res.status, code: res.status === 200 ? undefined : (JSON.parse(text) as { code: string }).code, retryAfter: res.headers.get('retry-after') };
}

/** What a client sending a batch row by row saw of an answer that came before its body ended. */
export interface EarlyAnswer {
  readonly status: number;
  readonly code?: string;
  readonly retryAfter?: string;
  readonly connection?: string;
  /** The server closed the connection while the client was still sending the body. */
  readonly closedByServer: boolean;
}

/**
 * A batch as a client uploading a file sends it, on a keep-alive connection of its own: `still
 * sending`, a row every 100 ms and never the end; `whole`, two rows and the end. Resolves with the
 * answer once the server closed the connection, or `withinMs` after the answer ended if it did not.
 */
export function batchOnItsOwnConnection(base: string, apiKey: string, body: 'still sending' | 'whole', withinMs = 5000): Promise<EarlyAnswer> {
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/x-ndjson', 'x-api-key': apiKey, 'transfer-encoding': 'chunked' };
    // One socket, kept alive by the client: whether the server closes it is the point.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const req = request(`${base}/api/v1/links/batch`, { method: 'POST', headers, agent });
    let answer: Omit<EarlyAnswer, 'closedByServer'> | null = null;
    let closed = false;
    let settled = false;
    let giveUp: NodeJS.Timeout | undefined;
    const row = () => req.write(JSON.stringify({ url: 'https://example.com/on-its-own-connection' }) + '\n');
    const sending = setInterval(() => body === 'still sending' && !req.destroyed && row(), 100);
    const settle = (closedByServer: boolean) => {
      if (settled) return;
      settled = true;
      clearInterval(sending);
      clearTimeout(giveUp);
      if (answer) resolve({ ...answer, closedByServer });
      else reject(new Error('the connection closed without an answer'));
      req.destroy();
      agent.destroy();
    };
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        const problem = res.statusCode === 200 ? null : (JSON.parse(text) as { code: string });
        answer = { status: res.statusCode ?? 0, code: problem?.code, retryAfter: res.headers['retry-after'], connection: res.headers.connection };
        if (closed) settle(true);
        else giveUp = setTimeout(() => settle(false), withinMs);
      });
    });
    // Before the client gives up, only the server closes it.
    req.on('socket', (socket) =>
      socket.once('close', () => {
        closed = true;
        if (answer) settle(true);
        else setTimeout(() => settle(true), 1000); // the answer's end may still be on its way through the parser
      }),
    );
    req.on('error', () => undefined); // a write after the server closed: the close tells
    row();
    if (body === 'whole') {
      row();
      req.end();
    }
  });
}

/** The id of the caller's tenant's key with this name. */
export async function keyIdOf(base: string, apiKey: string, name: string): Promise<string> {
  const keys = (await api(base, 'GET', '/api/v1/keys', apiKey)).body.keys as Array<{ id: string; name: string }>;
  const key = keys.find((k) => k.name === name);
  if (!key) throw new Error(`no key named ${name} among ${keys.map((k) => k.name).join(', ')}`);
  return key.id;
}
