import { mkdir, readFile, rename, writeFile } from 'fs/promises';
import { dirname } from 'path';
import { SnapshotEntry, SnapshotStore } from '@shortlink/read-path';

/** The hot-link snapshot as a JSON file, replaced atomically (write to a temp file, rename). */
export class FileSnapshotStore implements SnapshotStore {
  constructor(private readonly file: string) {}

  async load(): Promise<SnapshotEntry[]> {
    try {
      const parsed = JSON.parse(await readFile(this.file, 'utf8')) as { version: number; entries: SnapshotEntry[] };
      return parsed.version === 1 && Array.isArray(parsed.entries)
        ? parsed.entries.filter((e) => typeof e?.key === 'string' && typeof e?.link?.targetUrl === 'string')
        : [];
    } catch {
      return []; // no snapshot yet, or an unreadable one: start empty rather than fail to boot
    }
  }

  async save(entries: readonly SnapshotEntry[]): Promise<void> {
    await mkdir(dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify({ version: 1, savedAt: new Date().toISOString(), entries }));
    await rename(tmp, this.file);
  }
}
