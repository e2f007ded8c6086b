import { GroupCommit } from './group-commit';

/** A write that waits until the test lets it finish, recording what it carried. */
function gatedWrites(fail?: (items: readonly string[]) => unknown) {
  const writes: string[][] = [];
  const gates: Array<() => void> = [];
  const write = (items: readonly string[]) =>
    new Promise<void>((resolve, reject) => {
      writes.push([...items]);
      gates.push(() => {
        const error = fail?.(items);
        if (error) reject(error);
        else resolve();
      });
    });
  const release = async () => {
    await Promise.resolve();
    const gate = gates.shift();
    if (!gate) throw new Error('no write in flight');
    gate();
    // Let the committed callers and the next write start.
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { writes, write, release };
}

class Duplicate extends Error {}

describe('GroupCommit', () => {
  it('writes the first item at once and the items that arrive meanwhile together in the next write', async () => {
    const { writes, write, release } = gatedWrites();
    const commits = new GroupCommit<string>({ write, maxItems: 100 });
    const done: string[] = [];
    const submit = (item: string) => commits.submit(item).then(() => done.push(item));
    const first = submit('a');
    await Promise.resolve();
    expect(writes).toEqual([['a']]);
    const rest = ['b', 'c', 'd'].map(submit);
    expect(writes).toEqual([['a']]);
    await release();
    expect(done).toEqual(['a']);
    expect(writes).toEqual([['a'], ['b', 'c', 'd']]);
    await release();
    await Promise.all([first, ...rest]);
    expect(done).toEqual(['a', 'b', 'c', 'd']);
    expect(commits.counts).toEqual({ writes: 2, items: 4 });
  });

  it('carries at most maxItems per write', async () => {
    const { writes, write, release } = gatedWrites();
    const commits = new GroupCommit<string>({ write, maxItems: 2 });
    const all = ['a', 'b', 'c', 'd', 'e'].map((i) => commits.submit(i));
    await release();
    await release();
    await release();
    await Promise.all(all);
    expect(writes).toEqual([['a'], ['b', 'c'], ['d', 'e']]);
  });

  it('runs up to `concurrency` writes at once', async () => {
    const { writes, write, release } = gatedWrites();
    const commits = new GroupCommit<string>({ write, maxItems: 10, concurrency: 2 });
    const all = ['a', 'b', 'c', 'd'].map((i) => commits.submit(i));
    await Promise.resolve();
    expect(writes).toEqual([['a'], ['b']]);
    await release();
    expect(writes).toEqual([['a'], ['b'], ['c', 'd']]);
    await release();
    await release();
    await Promise.all(all);
  });

  it('writes a group that failed with a duplicate again item by item: only the duplicate fails', async () => {
    const { writes, write, release } = gatedWrites((items) => (items.includes('dup') ? new Duplicate('dup') : null));
    const commits = new GroupCommit<string>({ write, maxItems: 10, retryAlone: (e) => e instanceof Duplicate });
    const first = commits.submit('a');
    const outcomes = ['b', 'dup', 'c'].map((i) =>
      commits.submit(i).then(
        () => `${i} ok`,
        (e: Error) => `${i} ${e.message}`,
      ),
    );
    await release(); // a
    await release(); // b, dup, c: fails
    await release(); // b alone
    await release(); // dup alone: fails
    await release(); // c alone
    await first;
    expect(await Promise.all(outcomes)).toEqual(['b ok', 'dup dup', 'c ok']);
    expect(writes).toEqual([['a'], ['b', 'dup', 'c'], ['b'], ['dup'], ['c']]);
  });

  it('fails every item of a group on any other error, and goes on with the next group', async () => {
    let down = true;
    const { write, release } = gatedWrites(() => (down ? new Error('shard down') : null));
    const commits = new GroupCommit<string>({ write, maxItems: 10, retryAlone: (e) => e instanceof Duplicate });
    const outcome = (i: string) =>
      commits.submit(i).then(
        () => `${i} ok`,
        (e: Error) => `${i} ${e.message}`,
      );
    const a = outcome('a');
    const later = [outcome('b'), outcome('c')];
    await release();
    expect(await a).toBe('a shard down');
    down = false;
    await release();
    expect(await Promise.all(later)).toEqual(['b ok', 'c ok']);
  });
});
