export { BootstrapOutcome, GENERATION_API, GENERATION_PORTS, type GenerationExtension, GenerationFeatureModule } from './generation.module';
