// The generation app as one module of its contexts, for its main and the embedded launcher.
export { GENERATION_API, GENERATION_PORTS, GenerationAppModule, type GenerationExtension, type GenerationOptions } from './generation.module';
export { BootstrapOutcome } from '@shortlink/tenants-feature';
