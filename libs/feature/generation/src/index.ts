export { BootstrapOutcome, GENERATION_API, GENERATION_PORTS, GenerationFeatureModule } from './generation.module';
