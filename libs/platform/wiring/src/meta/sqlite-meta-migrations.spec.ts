import { migrateSqlite, openSqlite } from '@shortlink/sql';
import { META_SQLITE_MIGRATIONS } from './meta-migrations';

/**
 * The meta migrations that give a new scope to each tenant's first key (audit:read, members:write),
 * and keys:write to every key that could manage keys, on a database made before them; and the one
 * that makes keys act for the person who made them, as the audit log says.
 */
describe('SQLite meta migrations', () => {
  it("give each tenant's oldest key the audit and members scopes, once, and leave its other keys as they were", () => {
    const db = openSqlite(':memory:');
    const beforeAudit = META_SQLITE_MIGRATIONS.findIndex((m) => m.name === '006_audit_log');
    migrateSqlite(db, META_SQLITE_MIGRATIONS.slice(0, beforeAudit));
    db.prepare("INSERT INTO tenants (id, name, plan, created_at) VALUES ('t1', 'acme', 'free', 1)").run();
    const key = db.prepare("INSERT INTO api_keys (key_hash, tenant_id, id, name, prefix, scopes, created_at) VALUES (?, 't1', ?, ?, 'sl_', ?, ?)");
    key.run('h1', 'k1', 'first', 'links:read links:write analytics:read', 1);
    key.run('h2', 'k2', 'later', 'links:read', 2);
    migrateSqlite(db, META_SQLITE_MIGRATIONS);
    migrateSqlite(db, META_SQLITE_MIGRATIONS);
    const scopes = db.prepare('SELECT id, scopes FROM api_keys ORDER BY id').all();
    expect(scopes).toEqual([
      { id: 'k1', scopes: 'links:read links:write analytics:read audit:read members:write keys:write' },
      { id: 'k2', scopes: 'links:read' },
    ]);
    db.close();
  });

  it('makes a key act for the person whose key.created entry made it, and a key made by such a key for the same person; the rest for no person', () => {
    const db = openSqlite(':memory:');
    const before = META_SQLITE_MIGRATIONS.findIndex((m) => m.name === '011_key_people');
    migrateSqlite(db, META_SQLITE_MIGRATIONS.slice(0, before));
    db.prepare("INSERT INTO tenants (id, name, plan, created_at) VALUES ('t1', 'acme', 'free', 1)").run();
    const key = db.prepare("INSERT INTO api_keys (key_hash, tenant_id, id, name, prefix, scopes, created_at) VALUES (?, 't1', ?, ?, 'sl_', 'links:read', ?)");
    const made = db.prepare(
      "INSERT INTO audit_log (id, log_id, at, actor_type, actor_id, actor_name, action, target_type, target_id) VALUES (?, ?, 1, ?, ?, 'x', 'key.created', 'key', ?)",
    );
    key.run('h1', 'first', 'first key', 1);
    key.run('h2', 'by-ana', 'ana ci', 2);
    made.run('e2', 't1', 'person', 'ana', 'by-ana');
    key.run('h3', 'by-ana-key', 'made by ana ci', 3);
    made.run('e3', 't1', 'key', 'by-ana', 'by-ana-key');
    key.run('h4', 'by-first', 'made by the first key', 4);
    made.run('e4', 't1', 'key', 'first', 'by-first');
    key.run('h5', 'elsewhere', 'an entry of another log', 5);
    made.run('e5', 'other-tenant', 'person', 'eve', 'elsewhere');
    migrateSqlite(db, META_SQLITE_MIGRATIONS);
    expect(db.prepare('SELECT id, member_id FROM api_keys ORDER BY created_at').all()).toEqual([
      { id: 'first', member_id: null },
      { id: 'by-ana', member_id: 'ana' },
      { id: 'by-ana-key', member_id: 'ana' },
      { id: 'by-first', member_id: null },
      { id: 'elsewhere', member_id: null },
    ]);
    db.close();
  });
});
