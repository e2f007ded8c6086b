import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import type { FastifyReply } from 'fastify';
import { loadConfig } from '@shortlink/config';
import type { AuthenticatedRequest } from '@shortlink/nest-platform';
import { rollupsOfVisitorRows, VisitorMinuteRow } from '@shortlink/clicks-domain';
import { ChdbExecutor, SqlClickAggregateStore } from '@shortlink/olap';

/**
 * What the analytics controllers' specs share: tenant t1's request, a reply that keeps its headers,
 * a fixed minute `T` (epoch seconds), and an aggregate store on chdb in a directory of its own,
 * written with clicks per visitor by `open` and removed by `close`.
 */
export function controllerSpecFixture(name: string) {
  const headers: Record<string, string> = {};
  const reply = { header: (k: string, v: string) => ((headers[k] = v), reply) } as unknown as FastifyReply;
  let dir: string | undefined;
  const fixture = {
    config: loadConfig({ SHORTLINK_PUBLIC_BASE_URL: 'https://sho.rt' }),
    req: { principal: { tenantId: 't1' } } as AuthenticatedRequest,
    headers,
    reply,
    T: Date.UTC(2025, 10, 24, 16, 0, 0) / 1000,
    store: undefined as unknown as SqlClickAggregateStore,
    async open(rows: readonly VisitorMinuteRow[]): Promise<SqlClickAggregateStore> {
      dir = mkdtempSync(join(tmpdir(), `shortlink-${name}-`));
      fixture.store = new SqlClickAggregateStore(new ChdbExecutor(join(dir, 'chdb')), `${name}_spec`);
      await fixture.store.migrate();
      await fixture.store.write({ rollups: rollupsOfVisitorRows(rows) });
      return fixture.store;
    },
    async close(): Promise<void> {
      await fixture.store?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  return fixture;
}
