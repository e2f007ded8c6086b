import { Inject, Injectable, Module } from '@nestjs/common';
import { AuditLog } from '@shortlink/audit-domain';
import type { AppConfig } from '@shortlink/config';
import { CODE_SECRET, PASSWORD_HASHER, PasswordHasher } from '@shortlink/links-domain';
import { APP_CONFIG, APP_LOGGER, Lifecycle, PinoNestLogger, scheduleJob } from '@shortlink/nest-platform';
import {
  FallbackWindows,
  MAILER,
  Mailer,
  MemberService,
  OIDC_CLIENT,
  OidcClient,
  PEOPLE_STORE,
  PeopleStore,
  SecretBox,
  SessionService,
  SSO_ADDRESSES,
  SSO_STORE,
  SsoAddresses,
  SsoService,
  SsoStore,
} from '@shortlink/people-domain';
import { RATE_WINDOW_STORE, RateWindowStore, TenantService } from '@shortlink/tenants-domain';
import { AuthController } from './auth.controller';
import { MembersController } from './members.controller';
import { SessionController } from './session.controller';
import { SsoController } from './sso.controller';

/** The ports the people context injects (besides the platform's API access, which holds the sessions). */
export const PEOPLE_PORTS: readonly symbol[] = [PEOPLE_STORE, PASSWORD_HASHER, MAILER, SSO_STORE, OIDC_CLIENT, SSO_ADDRESSES, CODE_SECRET, RATE_WINDOW_STORE];

/** Sessions past their idle or absolute end are deleted by a job of each generation instance. */
@Injectable()
class SessionPurge {
  constructor(
    @Inject(SessionService) sessions: SessionService,
    @Inject(Lifecycle) lifecycle: Lifecycle,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(APP_LOGGER) appLogger: PinoNestLogger,
  ) {
    const logger = appLogger.scoped('Sessions');
    scheduleJob(lifecycle, config.links.expiryJobIntervalMs, () =>
      sessions.purgeEnded().catch((error) => logger.warn(`session purge failed: ${(error as Error).message}`)),
    );
  }
}

/**
 * Signing in and out, and who is calling: mounted on every app that accepts people's sessions (the
 * analytics app mounts only this, so an analyst signs in to the dashboard with an email).
 */
@Module({ controllers: [SessionController] })
export class SignInModule {}

/**
 * People (docs/design.md, "People and sessions", "Single sign-on"): members and invitations, the
 * person's own account (password, second factor, sessions), single sign-on, and sign-in. Sessions
 * are verified by the platform (ApiAccessModule), so that keys and people pass one guard.
 */
@Module({
  imports: [SignInModule],
  controllers: [MembersController, SsoController, AuthController],
  providers: [
    Lifecycle,
    {
      // Members and invitations: passwords hashed like links' (argon2id).
      provide: MemberService,
      inject: [PEOPLE_STORE, PASSWORD_HASHER, MAILER, APP_CONFIG, APP_LOGGER],
      useFactory: (store: PeopleStore, passwords: PasswordHasher, mailer: Mailer | null, config: AppConfig, appLogger: PinoNestLogger) => {
        const logger = appLogger.scoped('Invitations');
        return new MemberService(
          { store, passwords, mailer },
          {
            invitationTtlMs: config.people.invitationTtlMs,
            acceptUrl: config.people.acceptUrl,
            passwordMinLength: config.people.passwordMinLength,
            onMailFailure: (error) => logger.warn(`invitation not mailed (the token is in the answer): ${(error as Error)?.message}`),
          },
        );
      },
    },
    {
      // Client secrets and pending sign-ins sealed under keys derived from the code secret; starts
      // capped per tenant and per client address in the shared windows (Redis on the real stack).
      provide: SsoService,
      inject: [SSO_STORE, OIDC_CLIENT, SSO_ADDRESSES, CODE_SECRET, SessionService, TenantService, AuditLog, RATE_WINDOW_STORE, APP_CONFIG, APP_LOGGER],
      useFactory: (
        store: SsoStore,
        oidc: OidcClient,
        addresses: SsoAddresses,
        codeSecret: string,
        sessions: SessionService,
        tenants: TenantService,
        log: AuditLog,
        windows: RateWindowStore,
        config: AppConfig,
        appLogger: PinoNestLogger,
      ) => {
        const logger = appLogger.scoped('SingleSignOn');
        const sso = config.people.sso;
        const fallback = new FallbackWindows(windows, (error) =>
          logger.warn(`SSO start cap: the shared windows failed (${(error as Error)?.message}); counting on this instance`),
        );
        return new SsoService(
          { store, oidc, box: new SecretBox(codeSecret, 'sso v1'), sessions, tenants, audit: log },
          {
            callbackUrl: sso.callbackUrl,
            addresses,
            providerTimeoutMs: sso.timeoutMs,
            starts: { windows: fallback, perTenant: sso.startsPerMinute.perTenant, perAddress: sso.startsPerMinute.perAddress },
          },
        );
      },
    },
    SessionPurge,
  ],
  exports: [MemberService],
})
export class PeopleModule {}
