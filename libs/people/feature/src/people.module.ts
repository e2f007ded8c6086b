import { Inject, Injectable, Module } from '@nestjs/common';
import { AuditLog } from '@shortlink/audit-domain';
import type { AppConfig } from '@shortlink/config';
import { CODE_SECRET, PASSWORD_HASHER, PasswordHasher } from '@shortlink/links-domain';
import { APP_CONFIG, APP_LOGGER, Lifecycle, PinoNestLogger, scheduleJob } from '@shortlink/nest-platform';
import { MAILER, Mailer, MemberService, OIDC_CLIENT, OidcClient, PEOPLE_STORE, PeopleStore, SecretBox, SessionService, SSO_STORE, SsoService, SsoStore } from '@shortlink/people-domain';
import { TenantService } from '@shortlink/tenants-domain';
import { AuthController } from './auth.controller';
import { MembersController } from './members.controller';
import { SessionController } from './session.controller';
import { SsoController } from './sso.controller';

/** The ports the people context injects (besides the platform's API access, which holds the sessions). */
export const PEOPLE_PORTS: readonly symbol[] = [PEOPLE_STORE, PASSWORD_HASHER, MAILER, SSO_STORE, OIDC_CLIENT, CODE_SECRET];

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
        return new MemberService(store, passwords, mailer, {
          invitationTtlMs: config.people.invitationTtlMs,
          acceptUrl: config.people.acceptUrl,
          passwordMinLength: config.people.passwordMinLength,
          onMailFailure: (error) => logger.warn(`invitation not mailed (the token is in the answer): ${(error as Error)?.message}`),
        });
      },
    },
    {
      // Client secrets and pending sign-ins sealed under keys derived from the code secret.
      provide: SsoService,
      inject: [SSO_STORE, OIDC_CLIENT, CODE_SECRET, SessionService, TenantService, AuditLog, APP_CONFIG],
      useFactory: (store: SsoStore, oidc: OidcClient, codeSecret: string, sessions: SessionService, tenants: TenantService, log: AuditLog, config: AppConfig) =>
        new SsoService(store, oidc, new SecretBox(codeSecret, 'sso v1'), sessions, tenants, log, {
          callbackUrl: config.people.sso.callbackUrl,
          allowInsecureIssuers: config.people.sso.allowInsecureIssuers,
        }),
    },
    SessionPurge,
  ],
  exports: [MemberService],
})
export class PeopleModule {}
