import type { Provider } from '@nestjs/common';
import { AUDIT_LOG_STORE, AuditLog, AuditLogStore } from '@shortlink/audit-domain';
import type { AppConfig } from '@shortlink/config';
import { CODE_SECRET, ListCursors, PASSWORD_HASHER, PasswordHasher } from '@shortlink/links-domain';
import {
  FallbackWindows,
  PEOPLE_STORE,
  PeopleStore,
  SecondFactorService,
  SecretBox,
  SessionClients,
  SessionService,
  SignInThrottle,
} from '@shortlink/people-domain';
import { RATE_WINDOW_STORE, RateWindowStore } from '@shortlink/tenants-domain';
import { GEO_LOOKUP, GeoLocator } from '@shortlink/visitors-domain';
import { APP_CONFIG, APP_LOGGER } from '../app-tokens';
import { SESSION_VERIFIER } from '../auth';
import { Lifecycle } from '../lifecycle';
import type { PinoNestLogger } from '../logging';

/**
 * The audit log (docs/design.md, "Audit log"): its cursors sealed like the links listing's, with a
 * key of the code secret; entries the meta database does not take yet wait in memory. Needs Lifecycle.
 */
export const AUDIT_LOG_PROVIDER: Provider = {
  provide: AuditLog,
  inject: [AUDIT_LOG_STORE, CODE_SECRET, Lifecycle, APP_CONFIG, APP_LOGGER],
  useFactory: (store: AuditLogStore, codeSecret: string, lifecycle: Lifecycle, config: AppConfig, appLogger: PinoNestLogger) => {
    const logger = appLogger.scoped('AuditLog');
    const log = new AuditLog(store, {
      cursors: new ListCursors(codeSecret),
      retentionMs: config.audit.retentionMs,
      events: {
        deferred: (error, pending) =>
          logger.warn(`audit entries wait for the meta database (${pending} in memory, retried every second): ${(error as Error)?.message}`),
        delivered: (count) => logger.log(`${count} waiting audit entries stored`),
        dropped: (count) => logger.error(`${count} audit entries dropped: the meta database did not take them`),
      },
    });
    lifecycle.manage({ stop: () => log.stop() });
    return log;
  },
};

/**
 * What an app that accepts people's sessions provides (docs/design.md, "People and sessions"): the
 * second factor, the sessions (bound as the guard's SESSION_VERIFIER, so keys and sessions pass the
 * same scope check). Needs AuditLog (AUDIT_LOG_PROVIDER), Lifecycle and PEOPLE_SESSION_PORTS.
 */
export const PEOPLE_SESSION_PROVIDERS: readonly Provider[] = [
  {
    // Failed sign-ins and second-factor proofs are counted in the plan limits' shared windows (Redis on the real stack).
    provide: SignInThrottle,
    inject: [RATE_WINDOW_STORE, APP_CONFIG, APP_LOGGER],
    useFactory: (windows: RateWindowStore, config: AppConfig, appLogger: PinoNestLogger) => {
      const logger = appLogger.scoped('Sessions');
      const fallback = new FallbackWindows(windows, (error) =>
        logger.warn(`sign-in throttle: the shared windows failed (${(error as Error)?.message}); counting on this instance`),
      );
      return new SignInThrottle(fallback, config.people.signInThrottle);
    },
  },
  {
    // TOTP secrets sealed under a key derived from the code secret.
    provide: SecondFactorService,
    inject: [PEOPLE_STORE, CODE_SECRET, AuditLog, SignInThrottle],
    useFactory: (store: PeopleStore, codeSecret: string, log: AuditLog, throttle: SignInThrottle) =>
      new SecondFactorService({ store, box: new SecretBox(codeSecret), audit: log, throttle }, { issuer: 'shortlink' }),
  },
  {
    provide: SessionService,
    inject: [PEOPLE_STORE, PASSWORD_HASHER, SignInThrottle, AuditLog, SecondFactorService, APP_CONFIG],
    useFactory: (
      store: PeopleStore,
      passwords: PasswordHasher,
      throttle: SignInThrottle,
      log: AuditLog,
      secondFactor: SecondFactorService,
      config: AppConfig,
    ) =>
      new SessionService(
        { store, passwords, throttle, audit: log },
        {
          idleMs: config.people.session.idleMs,
          absoluteMs: config.people.session.absoluteMs,
          secondFactor,
        },
      ),
  },
  { provide: SESSION_VERIFIER, useExisting: SessionService },
  // Device, browser and place of a sign-in, kept with its session: the geo database the redirect uses.
  { provide: SessionClients, inject: [GEO_LOOKUP], useFactory: (geo: GeoLocator) => new SessionClients(geo) },
];

/** The ports PEOPLE_SESSION_PROVIDERS and AUDIT_LOG_PROVIDER inject (besides API_ACCESS_PORTS). */
export const PEOPLE_SESSION_PORTS: readonly symbol[] = [PEOPLE_STORE, PASSWORD_HASHER, CODE_SECRET, AUDIT_LOG_STORE, RATE_WINDOW_STORE, GEO_LOOKUP];
