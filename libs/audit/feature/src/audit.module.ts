import { Inject, Injectable, Module } from '@nestjs/common';
import { AUDIT_LOG_STORE, AuditLog } from '@shortlink/audit-domain';
import type { AppConfig } from '@shortlink/config';
import { CODE_SECRET } from '@shortlink/links-domain';
import { APP_CONFIG, APP_LOGGER, Lifecycle, PinoNestLogger, scheduleJob } from '@shortlink/nest-platform';
import { AuditLogController } from './audit-log.controller';
import { LinkAudit } from './link-audit';

/** The ports the audit context injects (the log itself is the platform's: sign-ins write to it on every app). */
export const AUDIT_PORTS: readonly symbol[] = [AUDIT_LOG_STORE, CODE_SECRET];

/** Entries past AUDIT_RETENTION_DAYS are deleted in batches by a job of each generation instance. */
@Injectable()
class AuditRetention {
  constructor(
    @Inject(AuditLog) log: AuditLog,
    @Inject(Lifecycle) lifecycle: Lifecycle,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(APP_LOGGER) appLogger: PinoNestLogger,
  ) {
    const logger = appLogger.scoped('AuditLog');
    scheduleJob(lifecycle, config.links.expiryJobIntervalMs, () =>
      log.purgeExpired().then(
        (purged) => purged && logger.log(`audit log: ${purged} entries past their retention deleted`),
        (error) => logger.warn(`audit log purge failed: ${(error as Error).message}`),
      ),
    );
  }
}

/**
 * The audit log (docs/design.md, "Audit log"): reading it, its retention, and the entries of link
 * changes (LinkAudit, one of the hooks the app binds to LINK_CHANGE_HOOKS).
 */
@Module({
  controllers: [AuditLogController],
  providers: [Lifecycle, AuditRetention, { provide: LinkAudit, inject: [AuditLog], useFactory: (log: AuditLog) => new LinkAudit(log) }],
  exports: [LinkAudit],
})
export class AuditModule {}
