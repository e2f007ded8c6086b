import type { Manager } from '@shortlink/tenants-domain';

/**
 * A member's role and what it may do (docs/design.md, "People and sessions" and "Security model"):
 * written once, in the tenants domain beside the scopes, since a key never holds more than the
 * role of the person it acts for.
 */
export { isRole, mayManageRole, type Role, ROLE_SCOPES, ROLES } from '@shortlink/tenants-domain';

/**
 * Who manages members: a person by its role (signed in, or through a key an owner made, which acts
 * for that owner), or a key of no person (`kind: 'key'`: the tenant's first key while the tenant
 * has no owner, so that it can invite the first one; the operator when it creates a tenant).
 */
export type MemberManager = Manager;
