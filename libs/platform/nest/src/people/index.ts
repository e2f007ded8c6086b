// Sign-in and sessions of people, for every app that accepts them (docs/design.md, "People and sessions").
export { dateTime, loginBody, memberSchema, memberView, meSchema, meView, role, signedInSchema, tenantSchema, tenantView } from './people.schemas';
export { secureCookie, SessionController } from './session.controller';
export { AUDIT_LOG_PROVIDER, PEOPLE_SESSION_PORTS, PEOPLE_SESSION_PROVIDERS } from './session.providers';
