import { scratchMysqlDatabases } from '@shortlink/testing';
import { openMysql } from '@shortlink/sql';
import { META_MYSQL_MIGRATIONS } from './meta-migrations';

/**
 * The meta migration that makes keys act for a person (docs/design.md, "Security model"), on a
 * MariaDB/MySQL meta database made before it: keys:write for the keys that could manage keys, and
 * each key attributed to the person whose `key.created` entry made it, through keys made by keys.
 */
describe('MySQL meta migrations: keys act for the person who made them', () => {
  it('gives keys:write to keys with links:write, and makes keys act for the person the audit log names, three links deep', async () => {
    const scratch = await scratchMysqlDatabases(['key_people']);
    const before = META_MYSQL_MIGRATIONS.findIndex((m) => new m().name === 'KeyPeople1735100000001');
    try {
      const old = await openMysql({ url: scratch.urls[0], poolSize: 2 }, META_MYSQL_MIGRATIONS.slice(0, before), '_migrations');
      try {
        await old.query("INSERT INTO tenants (id, name, plan, status, created_at) VALUES ('t1', 'acme', 'free', 'active', NOW(3))");
        const key = (id: string, scopes: string, at: number) =>
          old.query("INSERT INTO api_keys (key_hash, tenant_id, id, name, prefix, scopes, created_at) VALUES (?, 't1', ?, ?, 'sl_', ?, ?)", [
            `h-${id}`,
            id,
            id,
            scopes,
            new Date(Date.UTC(2026, 0, 1, 0, 0, at)),
          ]);
        const made = (entry: string, log: string, type: 'person' | 'key', actor: string, target: string) =>
          old.query(
            "INSERT INTO audit_log (id, log_id, at, actor_type, actor_id, actor_name, action, target_type, target_id) VALUES (?, ?, NOW(3), ?, ?, 'x', 'key.created', 'key', ?)",
            [entry, log, type, actor, target],
          );
        await key('first', 'links:read links:write analytics:read audit:read members:write', 1);
        await key('by-ana', 'links:read', 2);
        await made('00000000-0000-0000-0000-000000000002', 't1', 'person', 'ana', 'by-ana');
        await key('by-ana-key', 'links:read links:write', 3);
        await made('00000000-0000-0000-0000-000000000003', 't1', 'key', 'by-ana', 'by-ana-key');
        await key('by-that-key', 'links:read', 4);
        await made('00000000-0000-0000-0000-000000000004', 't1', 'key', 'by-ana-key', 'by-that-key');
        await key('by-first', 'links:write keys:write', 5);
        await made('00000000-0000-0000-0000-000000000005', 't1', 'key', 'first', 'by-first');
        await key('elsewhere', 'links:read', 6);
        await made('00000000-0000-0000-0000-000000000006', 'other-tenant', 'person', 'eve', 'elsewhere');
      } finally {
        await old.destroy();
      }
      const migrated = await openMysql({ url: scratch.urls[0], poolSize: 2 }, META_MYSQL_MIGRATIONS, '_migrations');
      try {
        const rows: Array<{ id: string; scopes: string; member_id: string | null }> = await migrated.query(
          'SELECT id, scopes, member_id FROM api_keys ORDER BY created_at',
        );
        expect(rows).toEqual([
          { id: 'first', scopes: 'links:read links:write analytics:read audit:read members:write keys:write', member_id: null },
          { id: 'by-ana', scopes: 'links:read', member_id: 'ana' },
          { id: 'by-ana-key', scopes: 'links:read links:write keys:write', member_id: 'ana' },
          { id: 'by-that-key', scopes: 'links:read', member_id: 'ana' },
          { id: 'by-first', scopes: 'links:write keys:write', member_id: null },
          { id: 'elsewhere', scopes: 'links:read', member_id: null },
        ]);
      } finally {
        await migrated.destroy();
      }
    } finally {
      await scratch.drop();
    }
  }, 120_000);
});
