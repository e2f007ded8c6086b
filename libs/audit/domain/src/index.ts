// The audit log: who changed what, when and from where (docs/design.md, "Audit log").
export {
  AUDIT_ACTIONS,
  type AuditAction,
  type AuditActor,
  type AuditActorType,
  type AuditChanges,
  type AuditContext,
  type AuditDetails,
  type AuditEntry,
  auditEntry,
  type AuditFacts,
  type AuditTarget,
  type AuditValue,
  diffOf,
  MAX_VALUE_CHARS,
  OPERATOR_LOG,
  plain,
  type StoredAuditEntry,
  SYSTEM_ACTOR,
} from './audit-entry';
export { type AuditCursors, type AuditDeliveryEvents, AuditLog, type AuditListRequest, type AuditLogOptions, type AuditPage } from './audit-log';
export { AUDIT_LOG_STORE, type AuditLogStore, type AuditPosition, type AuditQuery } from './ports';
