// The people context's API (docs/design.md, "People and sessions", "Single sign-on").
export { PEOPLE_PORTS, PeopleModule, SignInModule } from './people.module';
