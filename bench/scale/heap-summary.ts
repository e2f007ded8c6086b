/**
 * The largest parts of a V8 heap snapshot (the `.heapsnapshot` JSON Chrome DevTools reads), by
 * node type and constructor name, as a markdown table: enough to see what holds a process's heap
 * without opening DevTools.
 */
import { markdownTable } from '@shortlink/harness';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

export function heapSummary(json: string, top = 20): string {
  const s = JSON.parse(json) as Snapshot;
  const fields = s.snapshot.meta.node_fields;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  const types = s.snapshot.meta.node_types[0];
  const parts = new Map<string, { bytes: number; count: number }>();
  let total = 0;
  for (let i = 0; i < s.nodes.length; i += fields.length) {
    const type = types[s.nodes[i + typeAt]];
    // Strings and code are grouped by kind: their "names" are their contents.
    const name = type === 'object' || type === 'closure' || type === 'native' ? `${type} ${s.strings[s.nodes[i + nameAt]]}` : type;
    const bytes = s.nodes[i + sizeAt];
    total += bytes;
    const part = parts.get(name) ?? { bytes: 0, count: 0 };
    part.bytes += bytes;
    part.count++;
    parts.set(name, part);
  }
  const rows = [...parts]
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .slice(0, top)
    .map(([name, p]) => [name.replace(/\|/g, '\\|').slice(0, 70), (p.bytes / 2 ** 20).toFixed(1), p.count, ((100 * p.bytes) / total).toFixed(1)]);
  return `${markdownTable(
    [
      ['type and constructor', 'l'],
      ['MiB', 'r'],
      ['objects', 'r'],
      ['% of heap', 'r'],
    ],
    rows,
  )}\n\nHeap in the snapshot: ${(total / 2 ** 20).toFixed(1)} MiB.`;
}
