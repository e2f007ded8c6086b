import { createServer, IncomingMessage, ServerResponse } from 'http';
import { AddressInfo, Socket } from 'net';

export interface TargetTestServer {
  readonly port: number;
  /** Requests it got: `METHOD host path`. */
  readonly requests: string[];
  close(): Promise<void>;
}

/**
 * Targets for the dead-link checks, one loopback server told apart by the first label of the Host
 * (tests map `*.checks.test` to 127.0.0.1): `ok` answers 200, `gone` 404, `down` 503 (no
 * Retry-After), `broken` 500, `hang` accepts and never answers, `loop` redirects /a -> /b -> /a,
 * `chain` redirects three times then answers 200, `nohead` refuses HEAD (405) and answers GET 200,
 * `busy` 429 with Retry-After 3600. Anything else is 404.
 */
export async function startTargetTestServer(): Promise<TargetTestServer> {
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const host = (req.headers.host ?? '').split(':')[0];
    const path = req.url ?? '/';
    requests.push(`${req.method} ${host} ${path}`);
    const answer = (status: number, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'text/html', ...headers });
      res.end(req.method === 'HEAD' ? undefined : `<p>${status}</p>`);
    };
    switch (host.split('.')[0]) {
      case 'ok':
        return answer(200);
      case 'gone':
        return answer(404);
      case 'down':
        return answer(503);
      case 'broken':
        return answer(500);
      case 'hang':
        return; // never answers
      case 'loop':
        return answer(302, { location: path.startsWith('/a') ? '/b' : '/a' });
      case 'chain': {
        const step = Number(/^\/step(\d)/.exec(path)?.[1] ?? 0);
        return step >= 3 ? answer(200) : answer(301, { location: `/step${step + 1}` });
      }
      case 'nohead':
        return req.method === 'HEAD' ? answer(405, { allow: 'GET' }) : answer(200);
      case 'busy':
        return answer(429, { 'retry-after': '3600' });
      default:
        return answer(404);
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
