// The audit context's API (docs/design.md, "Audit log").
export { AUDIT_PORTS, AuditModule } from './audit.module';
export { LinkAudit } from './link-audit';
