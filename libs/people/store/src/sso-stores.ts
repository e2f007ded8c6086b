import { DataSource } from 'typeorm';
import type { AuditEntry } from '@shortlink/audit-domain';
import type { Member, NewSsoMember, Role, SsoSettings, SsoStore } from '@shortlink/people-domain';
import { insertAuditEntriesMysql, insertAuditEntriesSqlite } from '@shortlink/audit-store';
import { isMysqlDuplicate, SqliteDb, toDate } from '@shortlink/sql';
import { MEMBER_COLUMNS, memberFromRow, MemberRow } from './people-rows';

type DbDate = Date | number | string;
interface SsoRow {
  tenant_id: string;
  issuer: string;
  client_id: string;
  client_secret: string;
  allowed_domains: string;
  default_role: Role;
  created_at: DbDate;
  updated_at: DbDate;
}

const SSO_COLUMNS = 'tenant_id, issuer, client_id, client_secret, allowed_domains, default_role, created_at, updated_at';
const fromRow = (row: SsoRow): SsoSettings => ({
  tenantId: row.tenant_id,
  issuer: row.issuer,
  clientId: row.client_id,
  sealedSecret: row.client_secret,
  allowedDomains: JSON.parse(row.allowed_domains) as string[],
  defaultRole: row.default_role,
  createdAt: toDate(row.created_at),
  updatedAt: toDate(row.updated_at),
});
const params = (s: SsoSettings, time: (d: Date) => Date | number) => [
  s.tenantId,
  s.issuer,
  s.clientId,
  s.sealedSecret,
  JSON.stringify(s.allowedDomains),
  s.defaultRole,
  time(s.createdAt),
  time(s.updatedAt),
];
const INSERT_SSO_MEMBER = `INSERT INTO members (id, tenant_id, email, role, status, created_at, updated_at, invitation_hash, invitation_expires_at)
  VALUES (?, ?, ?, ?, 'active', ?, ?, NULL, NULL)`;
const FIND_MEMBER = `SELECT ${MEMBER_COLUMNS} FROM members WHERE tenant_id = ? AND email = ?`;
const ACTIVATE =
  "UPDATE members SET status = 'active', invitation_hash = NULL, invitation_expires_at = NULL, updated_at = ? WHERE id = ? AND status = 'invited'";
const created = (m: NewSsoMember): Member => ({ ...m, status: 'active', invitationExpiresAt: null });
const active = (m: Member): Member => ({ ...m, status: 'active', invitationExpiresAt: null });
const ms = (d: Date) => d.getTime();

/** The tenants' SSO settings in the embedded meta database (docs/design.md, "Single sign-on"). */
export class SqliteSsoStore implements SsoStore {
  constructor(private readonly db: SqliteDb) {}

  async get(tenantId: string): Promise<SsoSettings | null> {
    const row = this.db.prepare(`SELECT ${SSO_COLUMNS} FROM tenant_sso WHERE tenant_id = ?`).get(tenantId) as SsoRow | undefined;
    return row ? fromRow(row) : null;
  }

  async put(settings: SsoSettings, audit: AuditEntry): Promise<void> {
    this.db
      .transaction(() => {
        this.db.prepare(`INSERT OR REPLACE INTO tenant_sso (${SSO_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`).run(...params(settings, ms));
        insertAuditEntriesSqlite(this.db, [audit]);
      })
      .immediate();
  }

  async delete(tenantId: string, audit: AuditEntry): Promise<boolean> {
    return this.db
      .transaction(() => {
        if (!this.db.prepare('DELETE FROM tenant_sso WHERE tenant_id = ?').run(tenantId).changes) return false;
        insertAuditEntriesSqlite(this.db, [audit]);
        return true;
      })
      .immediate();
  }

  async memberForSignIn(member: NewSsoMember, audit: (member: Member) => AuditEntry) {
    return this.db
      .transaction(() => {
        const row = this.db.prepare(FIND_MEMBER).get(member.tenantId, member.email) as MemberRow | undefined;
        if (row) {
          this.db.prepare(ACTIVATE).run(ms(member.createdAt), row.id);
          return { member: active(memberFromRow(row)), created: false };
        }
        this.db.prepare(INSERT_SSO_MEMBER).run(member.id, member.tenantId, member.email, member.role, ms(member.createdAt), ms(member.createdAt));
        insertAuditEntriesSqlite(this.db, [audit(created(member))]);
        return { member: created(member), created: true };
      })
      .immediate();
  }
}

/** The tenants' SSO settings in the MySQL meta database (docs/design.md, "Single sign-on"). */
export class MysqlSsoStore implements SsoStore {
  constructor(private readonly ds: DataSource) {}

  async get(tenantId: string): Promise<SsoSettings | null> {
    const rows: SsoRow[] = await this.ds.query(`SELECT ${SSO_COLUMNS} FROM tenant_sso WHERE tenant_id = ?`, [tenantId]);
    return rows.length ? fromRow(rows[0]) : null;
  }

  async put(settings: SsoSettings, audit: AuditEntry): Promise<void> {
    await this.ds.transaction(async (m) => {
      await m.query(
        `INSERT INTO tenant_sso (${SSO_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON DUPLICATE KEY UPDATE issuer = VALUES(issuer), client_id = VALUES(client_id), client_secret = VALUES(client_secret),
           allowed_domains = VALUES(allowed_domains), default_role = VALUES(default_role), updated_at = VALUES(updated_at)`,
        params(settings, (d) => d),
      );
      await insertAuditEntriesMysql(m, [audit]);
    });
  }

  async delete(tenantId: string, audit: AuditEntry): Promise<boolean> {
    return this.ds.transaction(async (m) => {
      const result = (await m.query('DELETE FROM tenant_sso WHERE tenant_id = ?', [tenantId])) as { affectedRows: number };
      if (!result.affectedRows) return false;
      await insertAuditEntriesMysql(m, [audit]);
      return true;
    });
  }

  async memberForSignIn(member: NewSsoMember, audit: (member: Member) => AuditEntry) {
    const existing = await this.existing(member);
    if (existing) return existing;
    try {
      await this.ds.transaction(async (m) => {
        await m.query(INSERT_SSO_MEMBER, [member.id, member.tenantId, member.email, member.role, member.createdAt, member.createdAt]);
        await insertAuditEntriesMysql(m, [audit(created(member))]);
      });
      return { member: created(member), created: true };
    } catch (error) {
      // Another instance created it meanwhile (the unique key on tenant and email): that one is the member.
      if (!isMysqlDuplicate(error)) throw error;
      const found = await this.existing(member);
      if (!found) throw error;
      return found;
    }
  }

  private async existing(member: NewSsoMember): Promise<{ member: Member; created: false } | null> {
    const rows: MemberRow[] = await this.ds.query(FIND_MEMBER, [member.tenantId, member.email]);
    if (!rows.length) return null;
    await this.ds.query(ACTIVATE, [member.createdAt, rows[0].id]);
    return { member: active(memberFromRow(rows[0])), created: false };
  }
}
