import { SegmentIdAllocator } from './segment-id-allocator';
import { IdBlock, SequenceStore } from './ports';

describe('SegmentIdAllocator', () => {
  class CountingSequence implements SequenceStore {
    next = 1n;
    calls = 0;
    async allocateBlock(_name: string, size: number): Promise<IdBlock> {
      this.calls++;
      await new Promise((r) => setTimeout(r, 2));
      const start = this.next;
      this.next += BigInt(size);
      return { start, end: this.next };
    }
  }

  it('makes one round trip per block, shared by concurrent callers, and never repeats an id', async () => {
    const store = new CountingSequence();
    const ids = new SegmentIdAllocator(store, 'links', 1000);
    const got = await Promise.all(Array.from({ length: 2500 }, () => ids.nextId()));
    expect(new Set(got).size).toBe(2500);
    expect(store.calls).toBe(3);
    expect((await ids.nextIds(600)).length).toBe(600);
    expect(store.calls).toBe(4);
  });
});
