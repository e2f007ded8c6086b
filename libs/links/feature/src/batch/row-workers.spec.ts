import { UrlPolicy } from '@shortlink/url-policy';
import { RowWorkers } from './row-workers';
import { shapeRows } from './row-shaper';

describe('RowWorkers', () => {
  const lists = new UrlPolicy({ shortDomains: ['sho.rt'] }).fixedLists();
  const texts = [
    '{"url":"https://example.com/a b?q=1"}',
    '{"url":"https://bit.ly/x"}',
    '{"url":"https://sho.rt/x","alias":"mine"}',
    '{"url":"https://example.com/x","tags":["a"],"title":"T"}',
    '{"url":42}',
    '{"url":"https://example.com/x","nope":1}',
    'not json',
    '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]',
    '{ "url" : "https://аpple.com/login" }',
  ];
  let workers: RowWorkers | null = null;
  afterEach(async () => {
    await workers?.close();
    workers = null;
  });

  it('shape rows on a worker thread exactly as on the request’s thread (values, parsed targets, errors, hash texts)', async () => {
    workers = new RowWorkers(1, lists);
    workers.start();
    // Until the thread has loaded its code, the request's thread shapes; then the thread does.
    const thread = (workers as unknown as { workers: Array<{ ready: boolean; pending: Map<number, unknown> }> }).workers[0];
    while (!thread.ready) await new Promise((r) => setTimeout(r, 20));
    const sent = workers.shape(texts, false);
    expect(thread.pending.size).toBe(1);
    await sent;
    for (const hashed of [false, true]) {
      const onThread = await workers.shape(texts, hashed);
      expect(onThread).toEqual(shapeRows(texts, hashed, lists));
      expect(onThread.map((r) => ('error' in r ? r.error.code : 'ok'))).toEqual([
        'ok',
        'ok',
        'ok',
        'ok',
        'VALIDATION_FAILED',
        'VALIDATION_FAILED',
        'INVALID_JSON',
        'JSON_TOO_DEEP',
        'ok',
      ]);
    }
    // Groups in flight together come back to their own callers.
    const many = await Promise.all(Array.from({ length: 8 }, (_, i) => workers!.shape([`{"url":"https://example.com/${i}"}`], false)));
    expect(many.map((rows) => (rows[0] as { input: { url: string } }).input.url)).toEqual(Array.from({ length: 8 }, (_, i) => `https://example.com/${i}`));
  }, 60_000);

  it('shape on the request’s thread with no workers (BATCH_WORKERS=0), and after close', async () => {
    workers = new RowWorkers(0, lists);
    expect(await workers.shape(texts, false)).toEqual(shapeRows(texts, false, lists));
    const closed = new RowWorkers(1, lists);
    await closed.close();
    expect(await closed.shape(texts, true)).toEqual(shapeRows(texts, true, lists));
  });
});
