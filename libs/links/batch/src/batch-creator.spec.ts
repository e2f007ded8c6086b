import { DomainError, ErrorCode } from '@shortlink/core';
import { SequenceCodeStrategy } from '@shortlink/link-codes';
import { IdBlock, Link, LinkCreation, LinkService, SegmentIdAllocator } from '@shortlink/links-domain';
import { InMemoryLinkRepository, plainPasswords, RecordingChangeFeed, RecordingLinkCache, relayOver } from '@shortlink/links-domain/testing';
import { UrlPolicy } from '@shortlink/url-policy';
import { InMemoryBatchRecords } from './testing/in-memory-batch-records';
import { BatchCreator } from './batch-creator';
import { BatchOutcome, BatchRow } from './chunk';
import { BatchRecordStore } from './ports';

const DAY = 86_400_000;

const sequence = () => {
  let next = 1n;
  return { allocateBlock: async (_: string, size: number): Promise<IdBlock> => ({ start: next, end: (next += BigInt(size)) }) };
};

async function* rowsOf(inputs: ReadonlyArray<Omit<LinkCreation, 'tenantId'> | DomainError>): AsyncGenerator<BatchRow> {
  for (const [index, input] of inputs.entries()) {
    yield input instanceof DomainError ? { index, text: 'bad', error: input } : { index, text: JSON.stringify(input), input };
  }
}

const render = (o: BatchOutcome) => ('link' in o ? `${o.index} 201 ${o.link.domain}/${o.link.code} ${o.link.id}` : `${o.index} ${o.error.code}`);

describe('BatchCreator', () => {
  const setup = (options: { chunkRows?: number; insertRows?: number } = {}) => {
    const clock = { t: Date.UTC(2026, 11, 3) };
    const repo = new InMemoryLinkRepository(['a', 'b', 'c', 'd']);
    const cache = new RecordingLinkCache();
    const codes = new SequenceCodeStrategy('secret');
    const ids = sequence();
    const records = new InMemoryBatchRecords();
    const links = new LinkService(
      {
        links: repo,
        ids: new SegmentIdAllocator(ids, 'links', 10),
        codes,
        events: relayOver(repo, cache, new RecordingChangeFeed()),
        passwords: plainPasswords,
        urls: new UrlPolicy({ shortDomains: ['sho.rt'] }),
        clock: { now: () => clock.t },
      },
      { defaultDomain: 'sho.rt', sharedDomains: ['sho.rt'], retireForMs: 90 * DAY },
    );
    const creator = (recordStore: BatchRecordStore = records) =>
      new BatchCreator(
        { links, repository: repo, sequences: ids, codes, records: recordStore, clock: { now: () => clock.t } },
        { chunkRows: options.chunkRows ?? 10, insertRows: options.insertRows ?? 4, leaseMs: 1000, retentionMs: DAY, sequence: 'links' },
      );
    const stored = () => [...repo.links.values()];
    const run = async (inputs: ReadonlyArray<Omit<LinkCreation, 'tenantId'> | DomainError>, key: string | null = null, granted = Infinity, by = creator()) => {
      let left = granted;
      const started = await by.start({
        tenantId: 't1',
        idempotencyKey: key,
        rows: rowsOf(inputs),
        render,
        quota: async (n) => {
          const g = Math.min(n, left);
          left -= g;
          return { granted: g, refusal: new DomainError(ErrorCode.QUOTA_EXCEEDED, 'quota') };
        },
      });
      let text = '';
      for await (const chunk of started.lines()) text += chunk;
      return text.split('\n').filter(Boolean);
    };
    return { clock, repo, cache, codes, records, links, creator, run, stored };
  };
  const urls = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ url: `https://example.com/${from + i}` }));

  it('answers every row in order, writes each chunk in statements of insertRows, and lets a bad row fail alone', async () => {
    const { run, stored, repo, cache } = setup();
    const statements = jest.spyOn(repo, 'insertInStatements');
    const inputs = [...urls(12), { url: 'ftp://nope' }, new DomainError(ErrorCode.INVALID_JSON, 'x'), ...urls(11, 12)];
    const lines = await run([...inputs, { url: 'https://example.com/aliased', alias: 'will-be-taken' }]);
    expect(lines).toHaveLength(26);
    expect(lines.map((l) => l.split(' ')[0])).toEqual(Array.from({ length: 26 }, (_, i) => String(i)));
    expect(lines[12]).toBe('12 INVALID_URL');
    expect(lines[13]).toBe('13 INVALID_JSON');
    expect(lines.filter((l) => l.includes(' 201 '))).toHaveLength(24);
    expect(stored()).toHaveLength(24);
    expect(statements.mock.calls.map(([, rowsPerStatement]) => rowsPerStatement)).toEqual([4, 4, 4]);
    expect(statements.mock.calls.flatMap(([links]) => links.map((l) => l.code)).sort()).toEqual(
      stored()
        .map((l) => l.code)
        .sort(),
    );
    expect(cache.newLinks.map((l) => l.code).sort()).toEqual(
      stored()
        .map((l) => l.code)
        .sort(),
    );
  });

  it('tells the read path of the links each chunk created in one call, and not of a link that was not written', async () => {
    const { run, cache, stored } = setup();
    const told = jest.spyOn(cache, 'created');
    const lines = await run([...urls(24), { url: 'https://example.com/x', alias: 'taken-twice' }, { url: 'https://example.com/y', alias: 'taken-twice' }]);
    expect(lines.filter((l) => l.includes(' 201 '))).toHaveLength(25);
    expect(told.mock.calls.map(([links]) => links.length)).toEqual([10, 10, 5]); // chunks of 10
    expect(told.mock.calls.flatMap(([links]) => links.map((l) => l.code)).sort()).toEqual(
      stored()
        .map((l) => l.code)
        .sort(),
    );
  });

  it('checks aliases against every shard, retired codes, expired holders and the batch itself; the neighbours are created', async () => {
    const { run, repo, links } = setup();
    await repo.insert({ ...(await links.prepare({ tenantId: 't2', url: 'https://other.example/' })), id: '999999', code: 'elsewhere' } as Link);
    await links.create({ tenantId: 't2', url: 'https://example.com/gone', alias: 'deleted-one' });
    await links.remove('t2', { domain: 'sho.rt', code: 'deleted-one' }, null);
    const expired = await links.create({ tenantId: 't2', url: 'https://example.com/old', alias: 'expired-one' });
    await repo.replace({ ...expired, status: 'expired', version: 2 }, 1);
    const lines = await run([
      { url: 'https://example.com/1', alias: 'elsewhere' },
      { url: 'https://example.com/2', alias: 'deleted-one' },
      { url: 'https://example.com/3', alias: 'expired-one' },
      { url: 'https://example.com/4', alias: 'twice' },
      { url: 'https://example.com/5', alias: 'twice' },
      ...urls(3),
    ]);
    // Another tenant's deleted or expired alias is only unavailable to t1: no date, nothing about what happened to it.
    expect(lines.map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual([
      '0 ALIAS_TAKEN',
      '1 ALIAS_TAKEN',
      '2 ALIAS_TAKEN',
      '3 201',
      '4 ALIAS_TAKEN',
      '5 201',
      '6 201',
      '7 201',
    ]);
    expect(lines.slice(1, 3).join('\n')).not.toMatch(/availableAt|deleted|expired|\d{4}-\d{2}-\d{2}/);
  });

  it('gives a row whose alias was taken meanwhile its own answer, and still creates the rows of the same statement', async () => {
    const { run, repo, stored } = setup({ insertRows: 100 });
    // The alias appears between the look-up and the insert: only the unique key sees it.
    const findOnEveryShard = repo.findOnEveryShard.bind(repo);
    jest.spyOn(repo, 'findOnEveryShard').mockImplementationOnce(async (ids) => {
      const found = await findOnEveryShard(ids);
      await repo
        .insert({
          ...stored()[0],
          id: '424242',
          code: 'raced',
          domain: 'sho.rt',
          tenantId: 't9',
          tags: [],
          targetUrl: 'https://x.example/',
          createdAt: new Date(),
          updatedAt: new Date(),
          expiresAt: null,
          status: 'active',
          version: 1,
        } as Link)
        .catch(() => undefined);
      return found;
    });
    await run(urls(1)); // something to copy fields from
    const lines = await run([...urls(4, 10), { url: 'https://example.com/r', alias: 'raced' }, ...urls(4, 20)]);
    expect(lines.map((l) => l.split(' ')[1])).toEqual(['201', '201', '201', '201', 'ALIAS_TAKEN', '201', '201', '201', '201']);
  });

  it('moves a generated row to a spare id when its code is taken by an alias, the same way on every attempt', async () => {
    const { run, codes, links, stored } = setup();
    // The batch's first chunk gets ids 1..; id 1's code is already somebody's alias.
    await links.create({ tenantId: 't2', url: 'https://example.com/squatter', alias: codes.codeFor(1n, '', 0) });
    const lines = await run(urls(5), 'key-spare');
    expect(lines.map((l) => l.split(' ')[1])).toEqual(Array(5).fill('201'));
    expect(lines[0]).not.toContain(` ${codes.codeFor(1n, '', 0)} `);
    expect(new Set(stored().map((l) => l.code)).size).toBe(stored().length);
    expect(await run(urls(5), 'key-spare')).toEqual(lines);
  });

  it('looks a statement that passed its deadline up again once its shard ended it: committed rows are answered created, the rest SHARD_UNAVAILABLE', async () => {
    const { run, repo, stored } = setup();
    const timedOut = new DomainError(ErrorCode.SHARD_UNAVAILABLE, 'shard b is unavailable', { shard: 'b', retryAfterSeconds: 1 });
    // The first statement is committed by its shard 30 ms after the repository gave up on it; the second is not committed at all.
    jest.spyOn(repo, 'insertInStatements').mockImplementationOnce(async (links, rowsPerStatement) => {
      const [late, lost, ...rest] = Array.from({ length: Math.ceil(links.length / rowsPerStatement) }, (_, i) =>
        links.slice(i * rowsPerStatement, (i + 1) * rowsPerStatement),
      );
      const committed = new Promise((r) => setTimeout(r, 30)).then(() => repo.insertInStatements(late, rowsPerStatement)).then(() => true);
      return [
        { links: late, error: timedOut, settled: committed },
        { links: lost, error: timedOut, settled: Promise.resolve(true) },
        ...(await repo.insertInStatements(rest.flat(), rowsPerStatement)),
      ];
    });
    const lines = await run(urls(10));
    expect(lines.map((l) => l.split(' ')[1])).toEqual([...Array(4).fill('201'), ...Array(4).fill('SHARD_UNAVAILABLE'), '201', '201']);
    expect(stored()).toHaveLength(6);
    expect(
      lines
        .filter((l) => l.includes(' 201 '))
        .map((l) => l.split(' ')[3])
        .sort(),
    ).toEqual(
      stored()
        .map((l) => l.id)
        .sort(),
    );
  });

  it('charges the daily quota per chunk: rows beyond it are QUOTA_EXCEEDED, invalid rows cost nothing', async () => {
    const { run, stored } = setup();
    const lines = await run([{ url: 'ftp://x' }, ...urls(14)], null, 12);
    expect(lines.filter((l) => l.endsWith('QUOTA_EXCEEDED')).map((l) => Number(l.split(' ')[0]))).toEqual([13, 14]);
    expect(stored()).toHaveLength(12);
  });

  it('answers a retry with the same key with the same lines and creates nothing twice; other rows under the key are refused', async () => {
    const { run, stored, creator } = setup();
    const first = await run(urls(25), 'k');
    expect(await run(urls(25), 'k')).toEqual(first);
    expect(stored()).toHaveLength(25);
    // Another body under the same key: 422 before anything is answered when the first chunk differs...
    await expect(run(urls(25, 1), 'k')).rejects.toMatchObject({ code: ErrorCode.IDEMPOTENCY_KEY_REUSED });
    // ...and line by line from the first chunk that differs, or past the end of the recorded batch.
    const longer = await run([...urls(20), { url: 'https://example.com/changed' }, ...urls(10, 21)], 'k');
    expect(longer.slice(0, 20)).toEqual(first.slice(0, 20));
    expect(longer.slice(20).map((l) => l.split(' ').pop())).toEqual(Array(11).fill('IDEMPOTENCY_KEY_REUSED'));
    expect(stored()).toHaveLength(25);
    // While an attempt holds the key, another gets 409.
    const holder = await creator().start({
      tenantId: 't1',
      idempotencyKey: 'held',
      rows: rowsOf(urls(3)),
      render,
      quota: async (n) => ({ granted: n, refusal: new DomainError(ErrorCode.QUOTA_EXCEEDED, 'q') }),
    });
    await expect(run(urls(3), 'held')).rejects.toMatchObject({ code: ErrorCode.IDEMPOTENCY_KEY_IN_USE, details: { retryAfterSeconds: 1 } });
    for await (const _ of holder.lines()) void _;
    expect(await run(urls(3), 'held')).toHaveLength(3);
  });

  it('after a crash in the middle of a chunk, a retry recognises the rows already written and answers like one uninterrupted run', async () => {
    const { run, stored, repo, records, creator, clock } = setup();
    // The first attempt: chunk 0 answered, then chunk 1 stops with some shards written and one not.
    let crashed = false;
    const dying: BatchRecordStore = new Proxy(records, {
      get: (target, name) => {
        const value = Reflect.get(target, name) as (...args: unknown[]) => unknown;
        return typeof value === 'function' ? (...args: unknown[]) => (crashed ? Promise.reject(new Error('process gone')) : value.apply(target, args)) : value;
      },
    });
    const first = await creator(dying).start({
      tenantId: 't1',
      idempotencyKey: 'crash',
      rows: rowsOf(urls(30)),
      render,
      quota: async (n) => ({ granted: n, refusal: new DomainError(ErrorCode.QUOTA_EXCEEDED, 'q') }),
    });
    const lines = first.lines();
    const chunk0 = (await lines.next()).value as string;
    repo.stalled.add('c');
    void lines.next(); // chunk 1 starts writing and never finishes
    await new Promise((r) => setTimeout(r, 20));
    crashed = true;
    const written = stored().length;
    expect(written).toBeGreaterThan(10);
    expect(written).toBeLessThan(20);
    repo.stalled.delete('c');

    // The retry, by "another process", once the dead attempt's lease ran out.
    await expect(run(urls(30), 'crash')).rejects.toMatchObject({ code: ErrorCode.IDEMPOTENCY_KEY_IN_USE });
    clock.t += 1500;
    const retry = await run(urls(30), 'crash');
    expect(retry.slice(0, 10).join('\n') + '\n').toBe(chunk0);
    expect(retry.map((l) => l.split(' ')[1])).toEqual(Array(30).fill('201'));
    const byRow = stored()
      .map((l) => `sho.rt/${l.code} ${l.id}`)
      .sort();
    expect(retry.map((l) => l.split(' ').slice(2).join(' ')).sort()).toEqual(byRow);
    expect(stored()).toHaveLength(30);
    expect(await run(urls(30), 'crash')).toEqual(retry);
  });
});
