import { createServer, IncomingMessage, Server, ServerResponse } from 'http';
import { AddressInfo } from 'net';

/** The threat lists Web Risk's `uris.search` knows (its `ThreatType` enum, less the unspecified one). */
const THREAT_TYPES = ['MALWARE', 'SOCIAL_ENGINEERING', 'UNWANTED_SOFTWARE', 'SOCIAL_ENGINEERING_EXTENDED_COVERAGE'];

export interface WebRiskTestServer {
  /** `http://127.0.0.1:<port>/v1/uris:search`. */
  readonly endpoint: string;
  /** URIs on the server's lists, with the lists that name them. */
  readonly listed: Map<string, string[]>;
  /** Every search it was sent: the URI, the lists asked, the key. */
  readonly searches: Array<{ uri: string | null; threatTypes: string[]; key: string | null }>;
  /** While set, every search answers this HTTP status with Google's error document. */
  failWith: number | null;
  close(): Promise<void>;
}

const error = (res: ServerResponse, code: number, status: string, message: string) => {
  res.writeHead(code, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify({ error: { code, message, status } }));
};

/**
 * A local server that speaks Web Risk's documented `uris.search` (no machine here reaches Google):
 * `GET /v1/uris:search?threatTypes=…&threatTypes=…&uri=…&key=…`; `{}` for a URI on none of the
 * lists asked, else `{"threat": {"threatTypes": [the lists asked that name it], "expireTime": now +
 * 5 min, RFC 3339}}`; a missing `uri` or `threatTypes`, an unknown list or a wrong key is 400
 * INVALID_ARGUMENT in Google's error document.
 */
export async function startWebRiskTestServer(apiKey: string): Promise<WebRiskTestServer> {
  const listed = new Map<string, string[]>();
  const searches: WebRiskTestServer['searches'] = [];
  const state = { failWith: null as number | null };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method !== 'GET' || url.pathname !== '/v1/uris:search') return error(res, 404, 'NOT_FOUND', 'Not Found');
    const uri = url.searchParams.get('uri');
    const threatTypes = url.searchParams.getAll('threatTypes');
    const key = url.searchParams.get('key');
    searches.push({ uri, threatTypes, key });
    if (state.failWith !== null)
      return error(res, state.failWith, state.failWith === 429 ? 'RESOURCE_EXHAUSTED' : 'UNAVAILABLE', 'The service is currently unavailable.');
    if (key !== apiKey) return error(res, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.');
    if (!uri) return error(res, 400, 'INVALID_ARGUMENT', 'Request contains an invalid argument: uri is required.');
    if (threatTypes.length === 0) return error(res, 400, 'INVALID_ARGUMENT', 'Request contains an invalid argument: threatTypes is required.');
    const unknown = threatTypes.find((t) => !THREAT_TYPES.includes(t));
    if (unknown) return error(res, 400, 'INVALID_ARGUMENT', `Invalid value at 'threat_types' (TYPE_ENUM), "${unknown}"`);
    const hits = (listed.get(uri) ?? []).filter((t) => threatTypes.includes(t));
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify(hits.length ? { threat: { threatTypes: hits, expireTime: new Date(Date.now() + 300_000).toISOString() } } : {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}/v1/uris:search`,
    listed,
    searches,
    get failWith() {
      return state.failWith;
    },
    set failWith(value: number | null) {
      state.failWith = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
