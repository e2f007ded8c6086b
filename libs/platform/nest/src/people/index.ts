// Sign-in and sessions of people, for every app that accepts them (docs/design.md, "People and sessions").
export {
  dateTime,
  invitationSchema,
  invitedSchema,
  loginBody,
  memberSchema,
  memberView,
  meSchema,
  meView,
  role,
  signedInSchema,
  tenantSchema,
  tenantView,
} from './people.schemas';
export { AUDIT_LOG_PROVIDER, PEOPLE_SESSION_PORTS, PEOPLE_SESSION_PROVIDERS } from './session.providers';
