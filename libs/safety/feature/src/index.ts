// The safety context's API and jobs (docs/design.md, "Trust and safety").
export { SAFETY_PORTS, SafetyModule, SafetyScreeningModule } from './safety.module';
