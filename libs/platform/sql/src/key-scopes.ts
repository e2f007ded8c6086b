// Migrations of several contexts (the audit log, people) grant a new scope to each tenant's first
// key, its oldest, unless it has it; and take it back (docs/design.md, "Migrations").

/** MySQL: the grant. */
export const mysqlGrantToFirstKeys = (scope: string) => `
  UPDATE api_keys k
    JOIN (SELECT tenant_id, MIN(created_at) AS first_at FROM api_keys GROUP BY tenant_id) f ON f.tenant_id = k.tenant_id AND k.created_at = f.first_at
    SET k.scopes = CONCAT(k.scopes, ' ${scope}')
    WHERE CONCAT(' ', k.scopes, ' ') NOT LIKE '% ${scope} %'`;
/** MySQL: taking it back. */
export const mysqlWithdrawFromKeys = (scope: string) => `UPDATE api_keys SET scopes = TRIM(REPLACE(CONCAT(' ', scopes, ' '), ' ${scope} ', ' '))`;

/** SQLite: the grant. */
export const sqliteGrantToFirstKeys = (scope: string) => `
      UPDATE api_keys SET scopes = scopes || ' ${scope}'
        WHERE instr(' ' || scopes || ' ', ' ${scope} ') = 0
          AND created_at = (SELECT MIN(k.created_at) FROM api_keys k WHERE k.tenant_id = api_keys.tenant_id);`;
