import { createServer, IncomingMessage, Server } from 'http';
import { AddressInfo } from 'net';
import { WebhookUrlGuard } from '@shortlink/webhooks-domain';
import { PinnedWebhookTransport } from './pinned-webhook-transport';

/** A real receiver on 127.0.0.1: what arrives, and the status to answer. */
describe('PinnedWebhookTransport', () => {
  let server: Server;
  let port: number;
  const received: Array<{ host: string | undefined; headers: IncomingMessage['headers']; body: string }> = [];
  let status = 204;

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ host: req.headers.host, headers: req.headers, body });
        res.statusCode = status;
        res.end('ok');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('connects to the address the guard checked, not to what the name resolves to later, and reports the status', async () => {
    let lookups = 0;
    // hooks.example.test exists nowhere: reaching the server proves the socket used the checked address.
    const guard = new WebhookUrlGuard({ addresses: async () => (lookups++, ['127.0.0.1']) }, true);
    const transport = new PinnedWebhookTransport(guard, 2000);
    status = 202;
    const result = await transport.post(`http://hooks.example.test:${port}/in`, { 'webhook-id': 'msg_1', 'content-type': 'application/json' }, '{"a":1}');
    expect(result).toEqual({ statusCode: 202, error: null });
    expect(lookups).toBe(1);
    expect(received.at(-1)).toMatchObject({ host: `hooks.example.test:${port}`, body: '{"a":1}', headers: { 'webhook-id': 'msg_1' } });
  });

  it('refuses before connecting when the name resolves to a private address and private receivers are not allowed', async () => {
    const before = received.length;
    const transport = new PinnedWebhookTransport(new WebhookUrlGuard({ addresses: async () => ['127.0.0.1'] }, false), 2000);
    const result = await transport.post(`http://rebound.example.test:${port}/in`, {}, '{}');
    expect(result.statusCode).toBeNull();
    expect(result.error).toContain('non-public');
    expect(received.length).toBe(before);
  });

  it('reports a refused connection as an error, not a status', async () => {
    const transport = new PinnedWebhookTransport(new WebhookUrlGuard({ addresses: async () => ['127.0.0.1'] }, true), 2000);
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const freePort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const result = await transport.post(`http://127.0.0.1:${freePort}/`, {}, '{}');
    expect(result).toMatchObject({ statusCode: null, error: expect.stringContaining('ECONNREFUSED') });
  });
});
