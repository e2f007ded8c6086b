// People of a tenant (docs/design.md, "People and sessions"): members and roles, invitations, sign-in and sessions.
export { checkEmail, hashToken, type Member, type MemberStatus } from './member';
export { type Invitation, MemberService, type MemberServiceOptions, type MemberServiceParts } from './member-service';
export { checkNewPassword, MAX_PASSWORD_LENGTH } from './password-policy';
export {
  boundedSessionClient,
  MAILER,
  MAX_SESSION_CLIENT_PART,
  type Mailer,
  type MemberChangeDecision,
  type MemberChangeOutcome,
  type NewMember,
  type OutgoingMail,
  PEOPLE_STORE,
  type PeopleStore,
  type SecondFactorState,
  type Session,
  type SessionClient,
  type SessionWithMember,
  type SignInCandidate,
} from './ports';
export { isRole, type MemberManager, mayManageRole, type Role, ROLE_SCOPES, ROLES } from './roles';
export {
  csrfMatches,
  csrfTokenOf,
  principalOf,
  SessionService,
  type SessionServiceOptions,
  type SessionServiceParts,
  type SignedIn,
  type VerifiedSession,
} from './session-service';
export { FallbackWindows } from './fallback-windows';
export {
  MOVE_WINDOW_MS,
  RECOVERY_CODES,
  SecondFactorService,
  type SecondFactorCheck,
  type SecondFactorOptions,
  type SecondFactorParts,
  type SecondFactorProof,
  SecretBox,
} from './second-factor';
export { SignInThrottle, type SignInThrottleLimits, type ThrottleSubject } from './sign-in-throttle';
export { SessionClients } from './session-client';
export {
  type NewSsoMember,
  OIDC_CLIENT,
  type OidcClient,
  OidcError,
  type OidcIdentity,
  type OidcProvider,
  SSO_STORE,
  type SsoInput,
  SsoService,
  type SsoServiceOptions,
  type SsoServiceParts,
  type SsoSettings,
  type SsoStore,
  type SsoView,
} from './sso';
export { SSO_ADDRESSES, SsoAddresses } from './sso-addresses';
