import { migrateSqlite, openSqlite } from './sqlite-database';
import { SQLITE_META_MIGRATIONS } from './migrations';

/** The meta migrations that give a new scope to each tenant's first key (audit:read, members:write), on a database made before them. */
describe('SQLite meta migrations', () => {
  it("give each tenant's oldest key the audit and members scopes, once, and leave its other keys as they were", () => {
    const db = openSqlite(':memory:');
    const beforeAudit = SQLITE_META_MIGRATIONS.findIndex((m) => m.name === '006_audit_log');
    migrateSqlite(db, SQLITE_META_MIGRATIONS.slice(0, beforeAudit));
    db.prepare("INSERT INTO tenants (id, name, plan, created_at) VALUES ('t1', 'acme', 'free', 1)").run();
    const key = db.prepare("INSERT INTO api_keys (key_hash, tenant_id, id, name, prefix, scopes, created_at) VALUES (?, 't1', ?, ?, 'sl_', ?, ?)");
    key.run('h1', 'k1', 'first', 'links:read links:write analytics:read', 1);
    key.run('h2', 'k2', 'later', 'links:read', 2);
    migrateSqlite(db, SQLITE_META_MIGRATIONS);
    migrateSqlite(db, SQLITE_META_MIGRATIONS);
    const scopes = db.prepare('SELECT id, scopes FROM api_keys ORDER BY id').all();
    expect(scopes).toEqual([
      { id: 'k1', scopes: 'links:read links:write analytics:read audit:read members:write' },
      { id: 'k2', scopes: 'links:read' },
    ]);
    db.close();
  });
});
