/**
 * The live counter: the tenant's clicks as they happen, from the analytics app's
 * Server-Sent Events stream (GET /api/v1/events/stream, reached through the generation app's relay
 * at /api/analytics/v1/events/stream, same origin: the console's CSP is unchanged). Read with fetch
 * and a stream reader, as the dashboard does: the session cookie goes along, and a dropped stream is
 * opened again with the last id as Last-Event-ID, so the clicks in between still count (a `gap`
 * event says some may be missing).
 */

export interface ServerSentEvent {
  event: string;
  id: string | null;
  data: string;
}

/** The complete events of a buffer (each ends with a blank line) and what is left of it; comments (`: ping`) are skipped. */
export function parseEvents(buffer: string): { events: ServerSentEvent[]; rest: string } {
  const text = buffer.replace(/\r\n?/g, '\n');
  const events: ServerSentEvent[] = [];
  let at = 0;
  for (let end = text.indexOf('\n\n', at); end >= 0; end = text.indexOf('\n\n', at)) {
    const block = text.slice(at, end);
    at = end + 2;
    let event = 'message';
    let id: string | null = null;
    const data: string[] = [];
    let fields = 0;
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const name = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (name === 'event') event = value;
      else if (name === 'id') id = value;
      else if (name === 'data') data.push(value);
      else continue;
      fields++;
    }
    if (fields > 0 && (data.length > 0 || id !== null || event !== 'message')) events.push({ event, id, data: data.join('\n') });
  }
  return { events, rest: text.slice(at) };
}

export type LiveState = { state: 'connecting' | 'open' | 'closed'; clicks: number; note: string | null };

/**
 * Counts the clicks of the stream at `url` from now on, telling `onChange` each change; reconnects
 * after `retryMs` with Last-Event-ID. Returns the function that stops it.
 */
export function countLiveClicks(url: string, onChange: (state: LiveState) => void, retryMs = 2000): () => void {
  const abort = new AbortController();
  let lastId: string | null = null;
  let current: LiveState = { state: 'connecting', clicks: 0, note: null };
  const set = (change: Partial<LiveState>) => {
    current = { ...current, ...change };
    if (!abort.signal.aborted) onChange(current);
  };
  (async () => {
    const decoder = new TextDecoder();
    while (!abort.signal.aborted) {
      try {
        const headers: Record<string, string> = { accept: 'text/event-stream' };
        if (lastId) headers['last-event-id'] = lastId;
        const res = await fetch(url, { headers, credentials: 'same-origin', signal: abort.signal });
        if (!res.ok || !res.body) {
          const problem = (await res.json().catch(() => ({}))) as { code?: string; detail?: string };
          if (res.status === 401 || res.status === 403) {
            set({ state: 'closed', note: problem.detail ?? `HTTP ${res.status}` });
            return;
          }
          throw new Error(problem.code ?? `HTTP ${res.status}`);
        }
        set({ state: 'open', note: current.note === 'some clicks may be missing' ? current.note : null });
        const reader = res.body.getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          const { events, rest } = parseEvents(buffer);
          buffer = rest;
          let clicks = 0;
          for (const e of events) {
            if (e.id) lastId = e.id;
            if (e.event === 'click') clicks++;
            else if (e.event === 'gap') set({ note: 'some clicks may be missing' });
          }
          if (clicks) set({ clicks: current.clicks + clicks });
        }
        set({ state: 'closed', note: 'reconnecting…' });
      } catch (e) {
        if (abort.signal.aborted) return;
        set({ state: 'closed', note: `reconnecting… (${(e as Error).message})` });
      }
      await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
  })();
  return () => abort.abort();
}
