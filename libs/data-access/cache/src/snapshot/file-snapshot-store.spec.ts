import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { FileSnapshotStore } from './file-snapshot-store';

describe('FileSnapshotStore', () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-snapshot-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const link = {
    id: '1',
    tenantId: 't',
    targetUrl: 'https://example.com',
    redirectType: 302 as const,
    expiresAt: null,
    status: 'active' as const,
    version: 1,
    createdAt: 0,
  };

  it('round-trips entries and starts empty without a file', async () => {
    const store = new FileSnapshotStore(join(dir, 'a', 'snap.json'));
    expect(await store.load()).toEqual([]);
    await store.save([{ key: 'short:link:d:c', link }]);
    expect(await new FileSnapshotStore(join(dir, 'a', 'snap.json')).load()).toEqual([{ key: 'short:link:d:c', link }]);
  });

  it('ignores a corrupt file instead of failing', async () => {
    writeFileSync(join(dir, 'bad.json'), '{not json');
    expect(await new FileSnapshotStore(join(dir, 'bad.json')).load()).toEqual([]);
  });
});
